"""cule's trainers: one readable file per algorithm, building blocks in cule.trainers.common."""
