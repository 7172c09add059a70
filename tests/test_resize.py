"""The vector env's resize equals OpenCV's cv2.resize(..., INTER_AREA) byte for byte.

ale-py resizes observations with OpenCV's INTER_AREA; cule reproduces it in
cule/cpp/vector/preprocess.hpp (tap tables, float order, half-even rounding, the
integer-factor fast paths, and the fixed-point bilinear branch OpenCV takes
when an axis grows). Random images and sizes, grey and RGB, half of them with
repeated rows (the case where cule reuses a row's horizontal pass).
"""
import numpy as np
import pytest

from cule import _core

cv2 = pytest.importorskip("cv2", reason="opencv-python-headless is a test dependency: pip install -e '.[test]'")


def _images(count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        h, w = int(rng.integers(1, 260)), int(rng.integers(1, 200))
        img = rng.integers(0, 256, (h, w, 3) if rng.random() < 0.3 else (h, w), dtype=np.uint8)
        if rng.random() < 0.5:
            img = np.ascontiguousarray(np.repeat(img[::2], 2, axis=0)[:h])
        yield img, int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))


def test_random_shrinks_equal_opencv():
    bad = [(img.shape, dh, dw) for img, dh, dw in _images(2000, 0)
           if not np.array_equal(cv2.resize(img, (dw, dh), interpolation=cv2.INTER_AREA), _core.resize_area(img, dh, dw))]
    assert not bad, f"{len(bad)} of 2000 differ, e.g. {bad[:3]}"


@pytest.mark.parametrize("shape,size", [((210, 160), (84, 84)), ((250, 160), (84, 84)), ((210, 160, 3), (84, 84)),
                                        ((210, 160), (105, 80)), ((210, 160, 3), (105, 80)), ((210, 160), (70, 80)),
                                        ((210, 160), (42, 32)), ((210, 160), (210, 160)), ((250, 160, 3), (64, 64))])
def test_atari_sizes_equal_opencv(shape, size):
    img = np.random.default_rng(1).integers(0, 256, shape, dtype=np.uint8)
    assert np.array_equal(cv2.resize(img, size[::-1], interpolation=cv2.INTER_AREA), _core.resize_area(img, *size))


def test_random_growths_equal_opencv():
    """Either axis or both grown (the other shrunk or kept), odd widths and single rows or columns included."""
    rng = np.random.default_rng(2)
    bad, count = [], 0
    for img, _, _ in _images(1500, 3):
        h, w = img.shape[:2]
        dh, dw = int(rng.integers(1, 3 * h + 2)), int(rng.integers(w + 1, 3 * w + 2))
        if rng.random() < 0.5:
            dh, dw = int(rng.integers(h + 1, 3 * h + 2)), int(rng.integers(1, 3 * w + 2))
        count += 1
        if not np.array_equal(cv2.resize(img, (dw, dh), interpolation=cv2.INTER_AREA), _core.resize_area(img, dh, dw)):
            bad.append((img.shape, dh, dw))
    assert not bad, f"{len(bad)} of {count} differ, e.g. {bad[:3]}"


@pytest.mark.parametrize("size", [(224, 224), (84, 200), (420, 320), (250, 160), (211, 161)])
@pytest.mark.parametrize("channels", [1, 3])
def test_atari_growths_equal_opencv(size, channels):
    img = np.random.default_rng(4).integers(0, 256, (210, 160) + ((3,) if channels == 3 else ()), dtype=np.uint8)
    assert np.array_equal(cv2.resize(img, size[::-1], interpolation=cv2.INTER_AREA), _core.resize_area(img, *size))


def test_sizes_out_of_range_are_refused():
    for size in ((0, 5), (20, 4097)):
        with pytest.raises(ValueError, match=r"1\.\.4096"):
            _core.resize_area(np.zeros((10, 10), np.uint8), *size)


@pytest.mark.parametrize("width", [84, 52, 56, 68, 100, 120, 124, 148, 156, 44, 36])
@pytest.mark.parametrize("height", [210, 250])
def test_periodic_widths_equal_opencv(width, height):
    """Widths whose x cells repeat in a multiple of four periods take the host's
    vector pass; grey frames with runs and repeated rows as the TIA draws them, and random bytes."""
    assert _core.resize_period(height, 160, 84, width) > 0
    rng = np.random.default_rng(width * height)
    runs = np.repeat(rng.integers(0, 256, (height, 40), dtype=np.uint8), 4, axis=1)
    for img in (runs, np.repeat(runs[::3], 3, axis=0)[:height], rng.integers(0, 256, (height, 160), dtype=np.uint8)):
        img = np.ascontiguousarray(img)
        for dh in (84, height // 3, height):
            assert np.array_equal(cv2.resize(img, (width, dh), interpolation=cv2.INTER_AREA),
                                  _core.resize_area(img, dh, width)), (img.shape, dh, width)


def test_other_shapes_take_the_cell_loop():
    """RGB, integer factors and widths without four periods are resized cell by cell (still equal to OpenCV)."""
    assert _core.resize_period(210, 160, 84, 84, channels=3) == 0
    assert _core.resize_period(210, 160, 105, 80) == 0
    assert _core.resize_period(210, 160, 84, 83) == 0
