"""A plugin that wrongly registers a host kind the core already has."""

import sonar_core


@sonar_core.hookimpl
def register_host_kinds(register):
    register("python", lambda spec, services: None)
