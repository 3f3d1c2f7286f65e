"""Fitting actions of the real stand-ins allowed to act (issue #28 point 5): the 45 commands of
tests/mqtt/fit_commands.py over the MQTT demo home on a real mosquitto, each stand-in run with
the hub's check (hub/agent/call_fit.py) and, for comparison, without it. Prints, per model and
run, the actions that ran, how many did not fit their command, and the calls refused. Usage:
  python bench/bench_fit.py [--models smollm,gemma] [--without]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from mqtt.mqtt_helpers import Mosquitto  # noqa: E402
from mqtt.fit_commands import COMMANDS  # noqa: E402
from mqtt.test_fit_real_models import run_commands  # noqa: E402

from hub.agent.call_fit import CallFit  # noqa: E402
from hub.llm.llama_engine import LlamaEngine  # noqa: E402
from hub.llm.models import gemma3_270m_path, smollm2_path  # noqa: E402

MODELS = {"smollm": smollm2_path, "gemma": gemma3_270m_path}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="smollm,gemma")
    parser.add_argument("--without", action="store_true", help="also run with the check off")
    args = parser.parse_args()
    checked = CallFit.misfit
    with tempfile.TemporaryDirectory() as workdir:
        broker = Mosquitto(Path(workdir))
        broker.start()
        try:
            for key in args.models.split(","):
                engine = LlamaEngine(MODELS[key](), n_ctx=4096, seed=28)
                try:
                    for check in ([False, True] if args.without else [True]):
                        CallFit.misfit = checked if check else (lambda *a, **k: None)  # type: ignore[method-assign]
                        tally = await run_commands(engine, broker.port, Path(workdir), COMMANDS)
                        print(f"{engine.info.name}, check {'on' if check else 'off'}: {tally.line()}", flush=True)
                        for line in tally.unfitting:
                            print("   unfitting:", line)
                finally:
                    CallFit.misfit = checked  # type: ignore[method-assign]
                    await engine.close()
        finally:
            broker.stop()


if __name__ == "__main__":
    asyncio.run(main())
