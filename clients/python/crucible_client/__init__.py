"""crucible-client: the Python client of ``crucible serve``.

>>> from crucible_client import Client
>>> c = Client("http://127.0.0.1:8080")
>>> c.run(code="print(1)", language="python")["stdout"]
'1\\n'

Sessions (a sandbox kept between requests) are :mod:`crucible_client.session`; a verl
tool backed by them is :mod:`crucible_client.verl_tool`, an agent-framework ``Sandbox``
adapter :mod:`crucible_client.agents`. Reward adapters for verl and TRL live in
:mod:`crucible_client.rewards`.
"""

__version__ = "0.1.0"

from .client import DEFAULT_URL, BatchStream, Client, run_item, verify_item  # noqa: E402
from .errors import (  # noqa: E402
    CrucibleError,
    CrucibleInfraError,
    CrucibleOverloaded,
    CrucibleSessionBusy,
    CrucibleUnavailable,
)
from .session import Session, UnsafeArchive  # noqa: E402

__all__ = [
    "__version__",
    "DEFAULT_URL",
    "Client",
    "BatchStream",
    "run_item",
    "verify_item",
    "CrucibleError",
    "CrucibleOverloaded",
    "CrucibleUnavailable",
    "CrucibleInfraError",
    "CrucibleSessionBusy",
    "Session",
    "UnsafeArchive",
]
