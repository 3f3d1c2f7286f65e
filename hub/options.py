"""Each part's options, built once from the validated options (the composition root's job).

Every part declares a small frozen dataclass of the options it reads, beside its code; this
module gathers them in `HubOptions`, which `HubConfig.options_for` fills. So the parts never
see `HubConfig`, and a typo in a part is a type error.
"""

from __future__ import annotations

from dataclasses import dataclass

from hub.agent.ports import AgentOptions
from hub.backends.ha.client import HaOptions
from hub.config import HubConfig
from hub.custom.loader import CustomOptions
from hub.home.later import LaterOptions
from hub.home.local_lists import ListsOptions
from hub.home.places import PlacesOptions
from hub.home.policy import PolicyOptions
from hub.interfaces.http.rest_api import HttpOptions
from hub.interfaces.voice.pipeline import VoiceOptions
from hub.interfaces.wyoming.server import WyomingOptions
from hub.llm.factory import EngineOptions
from hub.mqtt_stack import MqttStackOptions
from hub.settings import SettingValues



@dataclass(frozen=True)
class HubOptions:
    llm: EngineOptions
    agent: AgentOptions
    settings: SettingValues
    policy: PolicyOptions
    later: LaterOptions
    custom: CustomOptions
    home_assistant: HaOptions
    places: PlacesOptions
    lists: ListsOptions
    mqtt: MqttStackOptions
    voice: VoiceOptions
    wyoming: WyomingOptions
    http: HttpOptions


def hub_options(config: HubConfig) -> HubOptions:
    return config.options_for(HubOptions)
