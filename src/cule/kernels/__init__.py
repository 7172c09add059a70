"""The CUDA kernels' source and what building them per ROM needs (used by the backend and the ptxas report)."""
import hashlib
from pathlib import Path

KERNEL_SOURCE = Path(__file__).resolve().parent / "kernels.cu"
CORE_HEADERS = Path(__file__).resolve().parent.parent / "cpp"


def game_type(game: str) -> str:
    """C++ name of a game's unit, as the core's game list (cule/cpp/ale/games/list.inc) declares it."""
    from .. import _core
    try:
        return _core.game_units[game]
    except KeyError:
        raise ValueError(f"no game unit for {game!r}: see cule.list_games()") from None


def build_defines(cart: str, game: str, gymnasium: bool = False) -> list[str]:
    """The -D options that build kernels.cu for one mapper, one game and one step policy.

    The step policy is the vector env's `gymnasium` option (cule.make sets it): gymnasium's AtariEnv steps
    (cule/cpp/vector/vector.hpp GymnasiumStep), else ale-py's vector env's (VectorEnvStep).
    """
    step = "GymnasiumStep" if gymnasium else "VectorEnvStep"
    return [f"-DCULE_CART=cule::Cart{cart}", f"-DCULE_GAMES=cule::OneGame<cule::games::{game_type(game)}>",
            f"-DCULE_STEP=cule::{step}"]


def kernel_source() -> str:
    """kernels.cu headed by a digest of the core headers it includes.

    CuPy keys its disk cache on the source text and options only, so without
    the digest a changed header would load a stale binary from the cache.
    """
    digest = hashlib.sha256()
    for path in sorted(CORE_HEADERS.rglob("*")):
        if path.suffix in (".hpp", ".inc", ".h"):
            digest.update(path.relative_to(CORE_HEADERS).as_posix().encode() + b"\0" + path.read_bytes())
    return f"// cule core headers {digest.hexdigest()}\n" + KERNEL_SOURCE.read_text()
