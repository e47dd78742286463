"""Gymnasium environment ids for gbely's environments, registered without importing gymnasium.

``import gbely`` must stay light (agents' tools import it), and gymnasium takes half a second to
import. So the ids are registered when gymnasium is imported — now if it already is, else by a
hook that runs once, right after ``import gymnasium`` finishes, whichever of the two imports
comes first. Then ``gymnasium.make("gbely/Duel-v0")`` works after ``import gbely`` (or
``gymnasium.make("gbely:gbely/Duel-v0")`` with nothing imported).

Why a hook and not a ``[project.entry-points."gymnasium.envs"]`` plugin: Gymnasium 1.0 removed
the plugin loader of gym 0.2x (``load_env_plugins``; Farama's ALE issue #487); the Gymnasium 1.x
this package requires reads no entry point of that group, so a plugin there would register
nothing.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from typing import Any, Dict, Optional, Sequence

#: id → gymnasium.register's arguments. Each id's keyword arguments are GbelyEnv's (and the
#: VectorEnv's, for ``gymnasium.make_vec(id, num_envs, vectorization_mode="vector_entry_point")``).
ENV_IDS: Dict[str, Dict[str, Any]] = {
    # One seat against the Council on the reference map: the competition's match.
    "gbely/Duel-v0": {"kwargs": {"map": "gbely", "opponent": "council"}},
    # Seat 0 of a 9-seat final (90×90) against seven built-in finalists and the Council.
    "gbely/Final-v0": {"kwargs": {"map": "final:gbely", "opponent": "council"}},
}


def register(gymnasium: Any) -> None:
    """Registers every id of :data:`ENV_IDS` that the registry does not hold yet."""
    for env_id, spec in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="gbely.env:GbelyEnv",
                               vector_entry_point="gbely.env:VectorEnv", **spec)


class _AfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when ``gymnasium`` is about to be imported, it wraps the real
    loader's ``exec_module`` so that :func:`register` runs once the module is complete, and
    leaves ``sys.meta_path``."""

    def find_spec(self, name: str, path: Optional[Sequence[str]] = None, target: Any = None) -> Any:
        if name != "gymnasium":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        inner = loader.exec_module

        def exec_module(module: Any) -> None:
            inner(module)
            register(module)

        loader.exec_module = exec_module
        return spec


def install() -> None:
    """Registers the ids now if gymnasium is imported, else when it is."""
    if "gymnasium" in sys.modules:
        register(sys.modules["gymnasium"])
    elif not any(isinstance(f, _AfterGymnasium) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterGymnasium())
