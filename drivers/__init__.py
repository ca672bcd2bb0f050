"""Card reader drivers behind one interface (`drivers.base.CardReader`), chosen by name.

The registry maps the `[reader] driver` name of the configuration to a factory that
builds the reader from the validated `ReaderConfig`. A factory may be given as
`"module:attribute"` so a driver's heavy imports (pyserial, OpenCV) happen only when it
is chosen. Adding a driver is one line at the bottom of this file.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drivers.base import CardReader
    from drivers.config import ReaderConfig

#: The modules of the `camera` extra, and what to run when one is missing.
CAMERA_MODULES = ("cv2", "pyzbar")
CAMERA_EXTRA = (
    "needs OpenCV and pyzbar, which a plain install leaves out: "
    "pip install 'baccarat-station[camera]' (and apt-get install libzbar0 for barcodes)"
)

#: Builds a reader from its configuration (raises `station.shared.sections.ConfigError` when its
#: own `[reader.NAME]` settings are wrong).
ReaderFactory = Callable[["ReaderConfig"], "CardReader"]

_REGISTRY: dict[str, ReaderFactory | str] = {}


def register(name: str, factory: ReaderFactory | str) -> None:
    """Make `name` a driver: `factory` is a callable or a lazy `"module:attribute"`."""
    if name in _REGISTRY:
        raise ValueError(f"a reader driver named {name!r} is already registered")
    _REGISTRY[name] = factory


def driver_names() -> tuple[str, ...]:
    """The registered driver names, in registration order."""
    return tuple(_REGISTRY)


def factory_for(name: str) -> ReaderFactory:
    """The factory of driver `name`, importing its module if it was registered lazily."""
    try:
        target = _REGISTRY[name]
    except KeyError:
        known = ", ".join(_REGISTRY)
        raise KeyError(f"no reader driver named {name!r}; the drivers are {known}") from None
    if isinstance(target, str):
        module, _, attribute = target.partition(":")
        loaded: ReaderFactory = getattr(importlib.import_module(module), attribute)
        _REGISTRY[name] = target = loaded
    return target


def create_reader(config: ReaderConfig) -> CardReader:
    """The reader that `config.driver` names, built from `config`; a ConfigError that
    names the extra to install if the driver's libraries are not there (the camera's)."""
    try:
        return factory_for(config.driver)(config)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in CAMERA_MODULES:
            raise
        from station.shared.sections import ConfigError

        raise ConfigError(f'[reader] driver = "{config.driver}" {CAMERA_EXTRA}') from None


register("serial", "drivers.serial_reader:SerialReader")
register("sim", "drivers.sim.bot:SimReader")
register("camera", "drivers.camera:CameraReader")
