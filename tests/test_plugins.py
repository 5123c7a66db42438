"""Bot plug-ins: the register_bots hook, entry points, drop-in files, registry and params."""

import pickle
import random
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pluggy
import pytest

import naparena
from naparena.bots import hookspecs, plugins
from naparena.bots.bot import DECISIONS, Bot, wants_events
from naparena.bots.plugins import load_registry
from naparena.errors import PluginError

REPO_BOTS = Path(__file__).resolve().parent.parent / "bots"


class Steady(Bot):
    name = "steady"
    description = "Always the first legal answer."
    params = {"samples": 32, "boldness": 0.5, "verbose": False, "style": "calm"}

    def bid(self, view):
        return view.legal[0]

    def play(self, view):
        return view.legal[0]


class Listener(Steady):
    name = "listener"

    def observe(self, event):
        self.last = event


def plugin_registering(*classes, fail_with=None):
    """An in-process plug-in object whose register_bots registers ``classes``."""

    class Plugin:
        @naparena.hookimpl
        def register_bots(self, register):
            for cls in classes:
                register(cls)
            if fail_with is not None:
                raise fail_with

    return Plugin()


def drop_in(folder, filename, body):
    path = folder / filename
    path.write_text(textwrap.dedent(body))
    return path


GOOD_DROP_IN = """
    import naparena
    from naparena.bots.bot import Bot

    class Good(Bot):
        name = "good"
        description = "first legal"

        def bid(self, view):
            return view.legal[0]

        def play(self, view):
            return view.legal[0]

    @naparena.hookimpl
    def register_bots(register):
        register(Good)
"""


class FakeEntryPoint:
    def __init__(self, name, package, version, load):
        self.name = name
        self.dist = SimpleNamespace(name=package, version=version)
        self._load = load

    def load(self):
        return self._load()


def fake_entry_points(monkeypatch, *points):
    asked = []

    def entry_points(group=None):
        asked.append(group)
        return list(points)

    monkeypatch.setattr(plugins.importlib.metadata, "entry_points", entry_points)
    return asked


# The hook ------------------------------------------------------------------------


def test_register_bots_hook_calls_every_plugin_not_first_result():
    pm = pluggy.PluginManager("naparena")
    pm.add_hookspecs(hookspecs)
    first, second = plugin_registering(Steady), plugin_registering(Listener)
    pm.register(first)
    pm.register(second)
    try:
        seen = []
        pm.hook.register_bots(register=seen.append)
        assert sorted(cls.name for cls in seen) == ["listener", "steady"]
    finally:
        pm.unregister(first)
        pm.unregister(second)
    assert pm.hook.register_bots.get_hookimpls() == []


def test_in_process_plugin_is_registered_with_its_source():
    registry = load_registry(bots_dir=None, extra_plugins=[plugin_registering(Steady)])
    entry = registry.get("steady")
    assert entry.cls is Steady
    assert entry.description == "Always the first legal answer."
    assert entry.source.startswith("in-process plug-in")
    assert registry.failures == []


def test_plugin_raising_in_register_bots_is_a_failure_and_others_still_register():
    broken = plugin_registering(Listener, fail_with=RuntimeError("half-built"))
    # pluggy would call the later plug-in first; the good one is listed first so a
    # loader that let the exception escape would never reach it.
    registry = load_registry(bots_dir=None, extra_plugins=[plugin_registering(Steady), broken])
    assert "steady" in registry.bots
    [failure] = registry.failures
    assert "RuntimeError: half-built" in failure.error
    assert "half-built" in failure.traceback


def test_misspelt_hook_is_reported_instead_of_silently_registering_nothing():
    class Typo:
        @naparena.hookimpl
        def register_bot(self, register):
            register(Steady)

    registry = load_registry(bots_dir=None, extra_plugins=[Typo()])
    assert "steady" not in registry.bots
    [failure] = registry.failures
    assert "unknown hook(s): register_bot" in failure.error


# Installed plug-ins (entry points) ---------------------------------------------


def test_broken_installed_plugin_is_reported_and_the_good_one_still_loads(monkeypatch):
    monkeypatch.delenv(plugins.DISABLE_AUTOLOAD_ENV)
    good = SimpleNamespace(register_bots=naparena.hookimpl(lambda register: register(Steady)))

    def explode():
        raise ImportError("no module named 'napbot_core'")

    asked = fake_entry_points(
        monkeypatch,
        FakeEntryPoint("broken", "brokenbots", "2.3", explode),
        FakeEntryPoint("good", "goodbots", "1.0", lambda: good),
    )
    registry = load_registry(bots_dir=None)

    assert asked == [plugins.ENTRY_POINT_GROUP]
    entry = registry.get("steady")
    assert entry.source == "entry point 'good' from package 'goodbots' 1.0"
    assert plugins.bot_version(entry) == "goodbots 1.0"
    [failure] = registry.failures
    assert failure.name == "broken"
    assert failure.source == "entry point 'broken' from package 'brokenbots' 2.3"
    assert failure.error == "ImportError: no module named 'napbot_core'"


def test_naparena_own_entry_point_is_not_registered_twice(monkeypatch):
    monkeypatch.delenv(plugins.DISABLE_AUTOLOAD_ENV)
    own = FakeEntryPoint("reference", "naparena", naparena.__version__, lambda: 1 / 0)
    fake_entry_points(monkeypatch, own)
    registry = load_registry(bots_dir=None)
    assert registry.failures == []
    assert registry.clashes == {}
    assert registry.get("random").source == f"built-in module '{plugins.BUILTIN_PLUGIN}'"


def test_env_var_disables_installed_plugins_but_reference_bots_still_load(monkeypatch):
    good = SimpleNamespace(register_bots=naparena.hookimpl(lambda register: register(Steady)))
    asked = fake_entry_points(monkeypatch, FakeEntryPoint("good", "goodbots", "1.0", lambda: good))
    registry = load_registry(bots_dir=None)
    assert asked == []
    assert "steady" not in registry.bots
    assert plugins.bot_version(registry.get("random")) == f"naparena {naparena.__version__}"


# Drop-in folder -------------------------------------------------------------------


def test_drop_in_folder_loads_good_files_and_reports_broken_ones(tmp_path):
    drop_in(tmp_path, "good.py", GOOD_DROP_IN)
    broken = drop_in(tmp_path, "broken.py", "raise RuntimeError('unfinished bot')\n")
    drop_in(tmp_path, "_helper.py", "raise AssertionError('helpers are not bots')\n")

    registry = load_registry(bots_dir=tmp_path)

    assert registry.get("good").cls.__module__ == "naparena_bots.good"
    [failure] = registry.failures
    assert failure.name == "broken"
    assert str(broken) in failure.source
    assert failure.error == "RuntimeError: unfinished bot"
    assert "naparena_bots.broken" not in sys.modules


def test_drop_in_without_hook_is_reported(tmp_path):
    drop_in(tmp_path, "forgot.py", "from naparena import Bot\n")
    [failure] = load_registry(bots_dir=tmp_path).failures
    assert failure.name == "forgot"
    assert "register_bots" in failure.error


def test_drop_in_bot_classes_and_instances_pickle(tmp_path):
    drop_in(tmp_path, "good.py", GOOD_DROP_IN)
    cls = load_registry(bots_dir=tmp_path).get("good").cls
    assert pickle.loads(pickle.dumps(cls)) is cls
    bot = cls(random.Random(7), 2)
    copy = pickle.loads(pickle.dumps(bot))
    assert type(copy) is cls
    assert copy.seat == 2
    assert copy.rng.random() == bot.rng.random()


def test_name_clash_between_drop_ins_names_both_files(tmp_path):
    first = drop_in(tmp_path, "a_first.py", GOOD_DROP_IN)
    second = drop_in(
        tmp_path,
        "b_second.py",
        GOOD_DROP_IN.replace("class Good", "class Other")
        .replace("register(Good)", "register(Other)\n        register(Solo)")
        + "\n    class Solo(Other):\n        name = 'solo'\n",
    )
    registry = load_registry(bots_dir=tmp_path)

    assert "good" not in registry.bots
    assert registry.clashes["good"] == (f"drop-in file {first}", f"drop-in file {second}")
    with pytest.raises(PluginError) as raised:
        registry.get("good")
    assert str(first) in str(raised.value) and str(second) in str(raised.value)
    assert [f.name for f in registry.failures] == ["good"]
    assert "solo" in registry.bots  # the clashing file's other bot is unaffected


def test_missing_default_bots_folder_is_fine_but_a_named_one_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "random" in load_registry().bots
    with pytest.raises(PluginError, match="'nowhere' does not exist"):
        load_registry(bots_dir="nowhere")


def test_example_bot_plays_highest_card_and_bids_lowest_with_three_of_a_suit():
    cls = load_registry(bots_dir=REPO_BOTS).get("example").cls
    bot = cls(random.Random(0), 0)
    bids = ("pass", "three", "four", "nap")
    # 2C 5C 9C: three clubs
    assert bot.bid(SimpleNamespace(hand=(0, 3, 7, 20, 40), legal=bids)) == "three"
    assert bot.bid(SimpleNamespace(hand=(0, 3, 20, 40, 50), legal=bids)) == "pass"
    # AC (12) outranks KS (50) although its int is lower.
    assert bot.play(SimpleNamespace(hand=(12, 50), legal=(12, 50))) == 12


# Registry and parameters ------------------------------------------------------


def test_registry_rejects_non_bots_and_nameless_bots():
    registry = plugins.Registry()
    with pytest.raises(PluginError, match="drop-in file x.py registered .*not a naparena.bots.bot.Bot"):
        registry.register(dict, "drop-in file x.py")

    class Nameless(Steady):
        name = ""

    with pytest.raises(PluginError, match="Nameless without a name"):
        registry.register(Nameless, "drop-in file x.py")
    assert registry.bots == {}


def test_unknown_bot_name_lists_the_available_ones():
    registry = load_registry(bots_dir=None, extra_plugins=[plugin_registering(Steady)])
    with pytest.raises(PluginError, match=r"unknown bot 'stedy' \(did you mean 'steady'\?\); available bots: .*steady"):
        registry.get("stedy")


def test_parameter_errors_name_the_bot_the_parameter_and_what_is_allowed():
    registry = load_registry(bots_dir=None, extra_plugins=[plugin_registering(Steady)])
    rng = random.Random(1)
    with pytest.raises(PluginError) as unknown:
        registry.make("steady", {"sampels": 8}, rng, 0)
    assert str(unknown.value) == (
        "bot 'steady' has no parameter 'sampels'; "
        "its parameters are: boldness, samples, style, verbose"
    )
    with pytest.raises(PluginError) as wrong:
        registry.make("steady", {"samples": "many"}, rng, 0)
    assert str(wrong.value) == (
        "bot 'steady' parameter 'samples' must be a whole number (int), got 'many' (str)"
    )
    with pytest.raises(PluginError, match="'samples' must be a whole number"):
        Steady.validate_params({"samples": True})  # bool is not int
    with pytest.raises(PluginError, match="'verbose' must be true or false"):
        Steady.validate_params({"verbose": 1})

    bot = registry.make("steady", {"samples": 8, "boldness": 1}, rng, 3)
    assert (bot.samples, bot.boldness, bot.verbose, bot.seat) == (8, 1.0, False, 3)
    assert isinstance(bot.boldness, float)


# Bot defaults --------------------------------------------------------------------


def test_bot_default_decisions_are_legal_and_cautious():
    bot = Steady(random.Random(0), 0)
    hand = (0, 1, 13, 14, 15, 25, 26, 38, 39, 51)  # 2C 3C | 2D 3D 4D AD | 2H AH | 2S AS
    # the four 2s and the lowest 3 (3C before 3D): rank decides, suit only breaks ties
    assert bot.garnet_discard(SimpleNamespace(hand=hand)) == (0, 1, 13, 26, 39)
    assert bot.floater_discard(SimpleNamespace(legal=(12, 27, 40))) == 27  # 3H is lowest
    assert bot.trumps(SimpleNamespace(hand=(0, 1, 26, 27), legal=(0, 1, 2, 3))) == 2
    assert bot.trumps(SimpleNamespace(hand=hand, legal=(0, 2, 3))) == 3
    assert (bot.peep(None), bot.floater_peep(None), bot.garnet(None)) == (False, False, False)
    assert (bot.exchange(None), bot.peep_exchange(None)) == ((), None)
    assert all(callable(getattr(bot, kind)) for kind in DECISIONS)


def test_only_bots_that_override_observe_want_events():
    assert not wants_events(Steady(random.Random(0), 0))
    assert wants_events(Listener(random.Random(0), 0))
    assert wants_events(Listener)
