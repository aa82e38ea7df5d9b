"""Model hosts: the systems under test a run asks (see :mod:`sonar_core.hosts.base`)."""

from .base import Host, HostAnswer, HostFactory, HostPool

__all__ = ["Host", "HostAnswer", "HostFactory", "HostPool"]
