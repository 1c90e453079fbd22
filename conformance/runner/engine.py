"""Running machines against an adapter: the engine behind ``mqconform run`` and campaigns."""

from __future__ import annotations

import functools
import time
from typing import Callable

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from adapters.base import Adapter, AdapterError, Capabilities
from conformance.checker.blame import explained_by
from conformance.checker.sequential import MEMO, STEPS
from conformance.generator import MACHINES
from conformance.generator.base import bind
from conformance.records.history import Failure, with_alternatives
from conformance.runner.collector import collector_tuned
from conformance.runner.minimise import minimise
from conformance.runner.recorded import CONFIRMED, EXPLAINED, FOUND, replay_recorded
from conformance.records.results import RunRecord, unreached_areas, vacuity
from conformance.runner.session import HarnessError, NonConformance, Session, ShrinkBounds, ShrinkSpent, one_case
from conformance.runner.stable import machine_digests_kept, stable_generation
from conformance.runner.stack import with_frame_room
from reference_model.rules import RULES

#: Steps per generated case.
STEPS_PER_CASE = 40
#: Cases searched per area when a run is not told how many.
DEFAULT_EXAMPLES = 200

#: Cases Hypothesis may run shrinking a departure; the kit's own minimisation of the
#: history (:mod:`conformance.runner.minimise`) takes it from there.  Over the whole fault catalogue
#: (2026-11-27, seed 7) 50 cases, with :data:`SHRINK_STALL`, gave minimal counterexamples 3% longer
#: in all than 500 did (741 operations against 717), at well under half the time to detect; the minimiser replays a
#: history without drawing it, which costs far less per try than a Hypothesis case.
SHRINK_CASES = 50

#: ... and ends sooner when this many cases in a row found no smaller departure: shrinking that has
#: stalled seldom resumes (over the catalogue, 25 cost 5 operations of minimal counterexamples in
#: all).  Not on a system that runs on real time, whose bound (:data:`SHRINK_CASES_REALTIME`) is
#: smaller still.
SHRINK_STALL = 25

#: ... on a system that runs on real time (a real broker), where a case holding a restart
#: takes many seconds and 500 of them would hold a run for hours.  Still counted in cases, so
#: that a seed fixes which cases run, and with them every verdict they give evidence for.
SHRINK_CASES_REALTIME = 20

#: A safety net only: seconds Hypothesis may spend shrinking one departure on a system that
#: runs on real time (20 cases holding a RabbitMQ restart each take about 5 minutes).  A shrink
#: this net cuts is recorded on the run, as its verdicts may then differ from another run of
#: the same seed (:attr:`RunRecord.timed_shrinks`); Hypothesis's own limit is raised above it
#: (:func:`run_machine`), so that it never ends a shrink unreported.
SHRINK_SECONDS_REALTIME = 600.0

#: "Use the default for the system" for a shrinking bound (cases or seconds, see :func:`shrink_bounds`).
BY_SYSTEM = object()


class NothingRan(RuntimeError):
    """No test case executed: never a pass."""


def machine_settings(examples: int, steps: int = STEPS_PER_CASE, database=None) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=database,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
    )


def area_platforms(area: str, caps: Capabilities) -> list[str]:
    """The platforms to run ``area`` on: each the adapter shows on which some of its rules apply."""
    if area not in caps.areas or area not in MACHINES:
        return []
    return [p for p in caps.platforms if any(rule.applies_on(p) for rule in RULES.all(area))]


def bound_machine(adapter: Adapter, area: str, platform: str, seed: int | None,
                  adapter_options: dict | None, coverage, set_aside: frozenset[str] = frozenset(),
                  deadline: float | None = None, shrink_budget=BY_SYSTEM,
                  shrink_until: float | None = None, shrink_seconds=BY_SYSTEM,
                  named: frozenset[str] | None = None,
                  undecided: frozenset[str] = frozenset(),
                  explained: Callable[[Failure], bool] | None = None) -> type:
    """``area``'s machine class, running against ``adapter`` on ``platform`` with its own session and seed.

    After ``deadline`` (a ``time.time()`` value) no new case is run on the system (see :class:`Session`);
    after a departure, at most ``shrink_budget`` cases shrink it, none starting after ``shrink_until``
    nor more than ``shrink_seconds`` after the departure was found (None: no such bound; by default
    the bounds suit the system, see :func:`shrink_bounds`).
    """
    session = Session(adapter, area, adapter_options, seed, coverage=coverage, platform=platform,
                      set_aside=set_aside, deadline=deadline,
                      shrink=shrink_bounds(adapter.capabilities(), shrink_budget, shrink_seconds, shrink_until),
                      named=named, undecided=undecided, explained=explained)

    machine = bind(MACHINES[area].on(session), session)
    if seed is not None:
        machine._hypothesis_internal_use_seed = seed
    return machine


def shrink_bounds(caps: Capabilities, cases=BY_SYSTEM, seconds=BY_SYSTEM, until: float | None = None) -> ShrinkBounds:
    """How far a departure may be shrunk on a system: the cases and seconds given, or where not given, on a
    virtual clock :data:`SHRINK_CASES` (ending sooner after :data:`SHRINK_STALL` in a row found nothing smaller)
    and no time bound; on real time :data:`SHRINK_CASES_REALTIME` with :data:`SHRINK_SECONDS_REALTIME` as a
    safety net.  ``until``: a hard end (``time.time()``)."""
    if cases is BY_SYSTEM:
        cases = SHRINK_CASES_REALTIME if caps.realtime else SHRINK_CASES
    if seconds is BY_SYSTEM:
        seconds = SHRINK_SECONDS_REALTIME if caps.realtime else None
    return ShrinkBounds(cases=cases, stall=None if caps.realtime else SHRINK_STALL, seconds=seconds, until=until)


@with_frame_room
def run_machine(machine, settings, keep_memo: bool = False) -> None:
    """Run a bound machine as Hypothesis does, with shrinking bounded (:data:`SHRINK_CASES`).

    Once shrinking has spent its cases the session stops the run at the next case
    (:class:`ShrinkSpent`): Hypothesis would go on drawing cases that run nothing, which costs
    about what running them does.  The smallest departure found is then raised as the
    :class:`NonConformance` it is, as it is when Hypothesis calls the run flaky after the budget
    was spent; any other flakiness is Hypothesis's to report.  ``keep_memo``: the step memo is kept for
    a run of the same cases that follows (a search without shrinking, then the same seed shrinking).
    """
    from hypothesis.internal.conjecture import engine as conjecture

    # Hypothesis ends any shrink at five minutes of its own; where the session's safety net is
    # longer, the net must be what fires, so that a shrink cut by the clock is known and reported.
    limit = machine.session.shrink.seconds
    hypothesis_limit = conjecture.MAX_SHRINKING_SECONDS
    if limit is not None:
        conjecture.MAX_SHRINKING_SECONDS = max(hypothesis_limit, limit + 60)
    session = machine.session
    session.stop_when_spent = True
    try:
        # The step memo serves one run (its cases share beginnings); let go of it at the end.
        with collector_tuned(release=None if keep_memo else MEMO.clear), stable_generation(), \
                machine_digests_kept():
            run_state_machine_as_test(machine, settings=settings)
    except ShrinkSpent:
        if session.broken is not None:
            raise session.broken from None
        raise NonConformance(session.smallest) from None
    except Flaky:
        if session.shrink_spent and session.broken is None and session.smallest is not None:
            raise NonConformance(session.smallest) from None
        raise
    finally:
        session.stop_when_spent = False
        conjecture.MAX_SHRINKING_SECONDS = hypothesis_limit


@attrs.frozen
class Round:
    """What one search of an area's machine came to (:func:`search`)."""

    #: The session the machine ran in: its cases counted, the other departures it met, how it ended.
    session: Session
    #: The departure it met, shrunk as far as the session's bounds let Hypothesis (None: it met none).
    departure: Failure | None = None
    #: The system answered the same operations differently when Hypothesis ran them again: the departure it did
    #: show stands, but a second run may not show it.
    unsteady: bool = False


class Unsteady(HarnessError):
    """The system answered the same operations differently when Hypothesis ran them again, and showed no
    departure: no verdict can be drawn from the round."""


@with_frame_room
def search(machine, settings, shrink: bool = True, keep_memo: bool = False) -> Round:
    """One search of a bound machine (:func:`bound_machine`): its cases run as ``settings`` say, the departure
    they meet shrunk within the session's bounds (``shrink`` False: the departure as first met).  The one
    pipeline from cases to a departure, for ``mqconform run`` (:func:`run_area`, round after round) and for a
    campaign's task (:mod:`conformance.campaign.spark`): each ending of Hypothesis's is read here once.

    The system or the adapter failing is the :class:`HarnessError` it raised (whichever way Hypothesis ended);
    a system that answered the same operations differently on a second run gives the smallest departure it
    showed, ``unsteady`` (:class:`Unsteady` when it showed none).  An interrupt leaves the session holding what
    was found (:attr:`Session.smallest`)."""
    session = machine.session
    if not shrink:
        settings = type(settings)(settings, phases=[p for p in settings.phases if p is not Phase.shrink])
    try:
        run_machine(machine, settings, keep_memo=keep_memo)
    except NonConformance as exc:
        return Round(session, exc.failure)
    except Flaky as exc:
        # What generation did next depended on what the system answered, and it answered differently when
        # Hypothesis ran the case again (a real broker's timing, or one that broke meanwhile).
        departures = [e.failure for e in getattr(exc, "exceptions", ()) if isinstance(e, NonConformance)]
        if session.smallest is not None:
            departures.append(session.smallest)
        if session.broken is not None:
            raise session.broken from None
        if not departures:
            raise Unsteady(f"{session.area}: the system answered the same operations differently on a second run "
                           f"({type(exc).__name__})") from None
        return Round(session, min(departures, key=lambda f: len(f.steps)), unsteady=True)
    except HarnessError:
        raise
    except Exception:
        if session.broken is None:
            raise
        raise session.broken from None
    return Round(session)


#: Rounds an area may spend on departures that those already recorded explain, besides its --keep-going rounds.
FREE_ROUNDS = 3
#: Cases of a round bounded by time, at most: it ends soon after the time is up, and the next goes on.
TIME_CHUNK = 50
#: Cases an area's rounds may run in all, in multiples of its budget: cases a departure already found cut
#: short are not counted against the budget, but they still run.
CUT_SHORT_BUDGET = 3


def _steps_let_go(function: Callable) -> Callable:
    """``function`` letting go of the model's outcomes kept for checks that follow a history again
    (:data:`~conformance.checker.sequential.STEPS`) when it ends: they serve one area's departures."""

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        finally:
            STEPS.clear()

    return wrapped


@with_frame_room
@collector_tuned()
@_steps_let_go
def run_area(adapter: Adapter, area: str, platform: str, examples: int, seed: int | None,
             adapter_options: dict | None, record: RunRecord, keep_going: int | None = 0,
             on_update: Callable[[RunRecord], None] | None = None,
             minimise_histories: bool = True, shrink_seconds=BY_SYSTEM,
             shrink_cases=BY_SYSTEM, deadline: float | None = None,
             found_before: tuple = (), elsewhere: Callable[[], tuple] | None = None,
             minimise_seconds: float | None = None, recorded_before: tuple = ()) -> tuple[str, float]:
    """Run one area's machine on one platform, adding to ``record``; returns (outcome, seconds).

    ``recorded_before``: recorded counterexamples (:class:`conformance.runner.recorded.Recorded`), each of this
    area and platform whose rules the search did not find broken replayed after it: one that shows its
    departure again is this run's (``record.recorded`` says what each showed).

    ``found_before``: departures found elsewhere (by other processes sharing the run): the rules they name set
    aside from the first case, as a round after such a departure sets them aside; those they break are found
    broken (a departure they explain is not reported again).  ``elsewhere()``: such departures found while this
    runs (by the other workers of a run shared among jobs), taken as ``found_before`` from the next round on; a
    departure met that they explain is neither shrunk on nor minimised (``record.found_elsewhere``).

    ``minimise_seconds``: the time minimising one departure's history may take (default
    :func:`conformance.runner.minimise.minimise_budget`).

    ``shrink_cases`` and ``shrink_seconds`` bound the cases and the time Hypothesis may spend
    shrinking a departure (defaults: :func:`shrink_bounds`).  Shrinking cut by the time bound
    before its cases are spent is recorded (``record.timed_shrinks``): a seed no longer fixes
    which cases ran, nor the verdicts of rules only those cases reached.

    A round stops at the first departure, which Hypothesis shrinks.  Further rounds (each with the
    seed plus its number, so that it runs cases of its own) look for departures from other rules:
    each sets aside the rules already found broken, so a system with one departure everywhere still
    gets a verdict on every other rule.  The area's
    ``examples`` are its budget of cases searched, shared by its rounds: a round gets what the
    rounds before it left, and rounds go on until it is spent (``keep_going`` None), or for at
    most ``keep_going`` rounds after the first.  ``deadline`` (``time.time()``): no case starts
    searching after it, nor a round; shrinking a departure met before it is not cut by it.

    A departure ``record`` already holds for this area on another platform is first
    replayed here; where it shows again it is this platform's departure too, and is
    not searched for and shrunk a second time.
    """
    started = time.monotonic()
    # the rules the system itself declared not applicable: set aside from the start, never searched for, never
    # failed (a departure they explain is stepped past, as one already found is)
    declared = adapter.capabilities().never_searched
    found_before = tuple(f for f in found_before if f.platform == platform)
    set_aside: frozenset[str] = declared | frozenset(r for f in found_before for r in f.rules)
    broken_before = frozenset(r for f in found_before for r in f.blamed)
    if elsewhere is None and not found_before:
        # In one process, the rules the run's other areas found broken on this platform (one system) are set aside
        # from the first case, as this area's own rounds set aside what they find: a case that meets one of
        # their departures goes on past it where those rules explain it, instead of ending there with what the
        # rest of the case would have shown (a DLQ handler's lost context, met by a get after a departure the
        # core area's rules explain).
        set_aside = set_aside | frozenset(r for f in record.failures if f.platform == platform and f.area != area
                                          for r in f.blamed)
    heard: frozenset[str] = frozenset()   # of those, the rules only other workers found broken, as this ran
    others = list(found_before)   # the departures found elsewhere, those heard of included

    def broken_here() -> frozenset[str]:
        """The rules this run's recorded failures on this platform break (one system: of any area)."""
        return frozenset(r for f in record.failures if f.platform == platform for r in f.blamed)

    def hear() -> None:
        """Take in what the other workers found since the last look (``elsewhere``)."""
        nonlocal set_aside, broken_before, heard
        if elsewhere is None:
            return
        news = [f for f in elsewhere() if f.platform == platform]
        others[len(found_before):] = news
        blamed = frozenset(r for f in news for r in f.blamed) - broken_before
        heard = heard | (blamed - broken_here())
        set_aside = set_aside | frozenset(r for f in news for r in f.rules)
        broken_before = broken_before | blamed

    def shrinks_no_further(named: frozenset[str]) -> Callable[[Failure], bool]:
        """What a round's session asks before each case that would shrink its departure: whether it will not be
        reported, as departures found before explain it.  In one process, those of the run's other areas
        (:func:`explained_by_other_areas`); shared with other processes, the rules they found broken so far with
        those ``named`` as the round began (another process has the counterexample).  Asked again only when the
        departure, or what the others found, has changed."""
        shared = elsewhere is not None or bool(found_before)
        last: list = [None, None]   # what was last asked: the departure, and what the others had found

        def explained(failure) -> bool:
            if shared:
                hear()
            heard = broken_before if shared else frozenset()
            if last[0] is failure and last[1] == heard or shared and not heard:
                return False
            last[:] = [failure, heard]
            if shared:
                return explainer(failure)(heard | named)
            return explained_by_other_areas(failure) is not None
        return explained

    def undecided_elsewhere() -> frozenset[str]:
        """The rules found elsewhere only by histories that break one of several rules: a case stepping past a
        departure from them fails none of them (as in one process, where the run's coverage knows them)."""
        alone = {r for f in others if not f.one_of for r in f.blamed if r not in f.either}
        return frozenset(r for f in others for r in (f.blamed if f.one_of else f.either)) - alone
    broken: list[str] = []   # the rules the recorded failures break
    verdicts: list[str] = []   # ... as each failure's line says them (each, one of them, or each and one of others)
    named: set[str] = set()   # every rule they name (a later departure naming only these is not new)
    outcome = "conformant"

    unsteady = False
    met = False   # a departure met that the rules found broken before explain
    explained = False   # the last one met, explained by departures found elsewhere before it was minimised
    met_known: set[str] = set()   # those of its rules found broken before

    def tidy(failure, aside: frozenset[str] = frozenset()):
        if not minimise_histories:
            return failure
        began = time.monotonic()
        try:
            return minimise(failure, adapter, budget=minimise_seconds, set_aside=aside)
        finally:
            record.spend("minimise", time.monotonic() - began)

    # the rules of a failure of this run being shown again in a better history (the recorded loop below): not
    # known while the better one is diagnosed, so that it is not taken as explained by the one it is to replace
    freeing: frozenset[str] = frozenset()

    def known_now() -> frozenset[str]:
        # found broken (in this area, or in another on this platform: one system; or by another worker), or
        # declared not applicable
        return (frozenset(broken) | declared | broken_before | broken_here()) - freeing

    def explained_before(failure) -> bool:
        """Whether departures found before, relaxed, explain ``failure``'s history as met, before it is minimised:
        then it is not minimised.  Those of other processes (another worker's, or handed to the run) with
        those found broken here; in one process, the rules found broken in the run's other areas on this
        platform, where the rules the history needs of them (each without which the others do not explain it)
        explain it by themselves (where several would each do, minimising and blaming decide: a "one of" pair
        relaxed together explains more than either rule does).  Minimising a history an earlier area's
        departure explains, only to find that out, was most of such a run's time."""
        hear()
        if elsewhere is None and not found_before:
            needed = explained_by_other_areas(failure)
            if needed is None:
                return False
            met_known.update(needed)
            return True
        known, explains = known_now(), explainer(failure)
        if not explains(known):
            return False
        if not explains(known - heard):
            record.found_elsewhere += 1
        met_known.update(set(failure.rules) & known)
        return True

    def explained_by_other_areas(failure) -> frozenset[str] | None:
        """In one process: the rules found broken in the run's other areas on this platform that explain ``failure``'s
        history by themselves, relaxed with those found broken here (:func:`explained_before`); None where they do
        not.  A session asks it of each smaller departure while shrinking, and shrinks no further one it holds for."""
        other_areas = frozenset(r for f in record.failures if f.platform == platform and f.area != area
                                for r in f.blamed)
        if not other_areas:
            return None
        known, explains = known_now(), explainer(failure)
        if not explains(known):
            return None
        needed = frozenset(r for r in known if not explains(known - {r}))
        if not needed or not needed <= other_areas or not explains(needed):
            return None
        return needed

    def explainer(failure) -> Callable[[frozenset[str]], bool]:
        """Whether rules, relaxed, make ``failure``'s history pass on this platform (:func:`blame.explained_by`)."""
        pairs = [(s.op, s.observed) for s in failure.steps]
        tolerance = adapter.capabilities().expiry_tolerance
        return lambda rules: explained_by(pairs, platform, rules, tolerance)

    def found(failure, not_reproduced: bool = False, aside: frozenset[str] = frozenset(),
              tidied: bool = False, instead_of=None):
        """Record ``failure`` (minimised unless ``tidied``) and return it as recorded, found with the
        rules ``aside`` set aside (its history may pass through departures from them, as the round
        that found it stepped past them).  One whose minimal form names only rules a failure
        recorded before names is not recorded again (None).  ``instead_of``: a failure of this run, not shown
        again, that ``failure`` is to replace: recorded in its place where it breaks the same rules, shown again,
        its blame confirmed where the other's was (else None, and ``instead_of`` stays)."""
        nonlocal freeing
        if instead_of is not None:
            others = frozenset(r for f in record.failures if f.platform == platform and f is not instead_of
                               for r in f.blamed)
            freeing = frozenset(instead_of.blamed) - others - declared - broken_before
            try:
                return record_found(failure, False, aside, tidied, replacing=instead_of)
            finally:
                freeing = frozenset()
        return record_found(failure, not_reproduced, aside, tidied)

    def record_found(failure, not_reproduced: bool, aside: frozenset[str], tidied: bool, replacing=None):
        nonlocal outcome, unsteady, met, explained
        if not tidied and explained_before(failure):
            met = True
            # a case cut short by departures found elsewhere (by other processes) is not counted against the
            # budget; one a departure of this run's explains is, as it was when such a case was minimised
            explained = elsewhere is not None or bool(found_before)
            return None
        if not tidied:
            failure = tidy(failure, aside)
        known = known_now()
        # the rules found broken so far only as one of several (each such history breaks one of them and shows not
        # which: Coverage.only_one_of, as the report reads them): a departure blamed on one of them alone settles
        # which, and is recorded though its rule is known (the others of the "one of" then take the verdict their
        # own evidence gives)
        undecided = frozenset(r for r in known - declared - broken_before if record.coverage.only_one_of(r))
        if known and set(failure.rules) <= known and not set(failure.rules) & undecided:
            met_known.update(failure.rules)
            met = True
            return None
        # (diagnosed with those rules on trial: relaxed as known, each would explain the history that settles it)
        failure = with_alternatives(failure, adapter.capabilities().expiry_tolerance, aside,
                                    known_by=known - undecided)
        # (blamed on that rule alone: a history that needs it relaxed together with others shows no more than the
        # one of several did)
        settles = len(failure.blamed) == 1 and failure.mismatch.confirmed and failure.blamed[0] in undecided
        if not settles and (failure.mismatch.known or (known and set(failure.blamed) <= known)):
            # the departures already found explain it: the checker only named it by other rules (a rule a
            # departure merely mentioned before is new when this one is blamed on it)
            named.update(failure.rules)
            met_known.update(set(failure.rules) & known)
            met = True
            return None
        not_reproduced = not_reproduced or not failure.reproduced
        if not_reproduced:
            failure = attrs.evolve(failure, reproduced=False)
        # recorded with every rule its diagnosis took as found broken (those found later in the round that met
        # it too; not those found only as one of several, which were on trial), so that a diagnosis of it again,
        # by the report's tests or a replay, blames what this one did
        failure = attrs.evolve(failure, found_broken=tuple(sorted(
            (set(failure.found_broken) | known) - undecided - set(failure.blamed))))
        if replacing is None:
            record.add_failure(failure)
            unsteady = unsteady or not_reproduced
        elif not_reproduced or not _better(failure, replacing):
            return None   # shown again, but no better evidence of the same departure
        else:
            record.replace_failure(replacing, failure)
            unsteady = any(not f.reproduced for f in record.failures if f.area == area and f.platform == platform)
        if on_update is not None:
            on_update(record)
        broken.extend(r for r in failure.blamed if r not in broken)
        named.update(failure.rules)
        how = "NON-CONFORMANT, not reproduced on a second run" if unsteady else "NON-CONFORMANT"
        verdicts.extend([failure.blamed_text] if failure.blamed_text not in verdicts else [])
        outcome = f"{how} (" + "; ".join(verdicts) + ")"
        return failure

    # None: as many rounds as the budget allows (each spends at least one case)
    rounds = None if keep_going is None else keep_going + 1

    def use_round() -> None:
        nonlocal rounds
        rounds = None if rounds is None else rounds - 1
    for earlier in [f for f in record.failures if f.area == area and f.platform != platform]:
        if rounds != 0 and not set(earlier.rules) <= set_aside:
            try:
                again = _again(adapter, earlier, platform, adapter_options, record)
            except HarnessError as exc:
                record.error = str(exc)
                return "error", time.monotonic() - started
            if again is not None:
                found(again)
                set_aside = set_aside | set(again.rules)
                use_round()

    def besides(session) -> None:
        """Report the departures ``session`` met besides the one reported (Hypothesis, shrinking one
        departure, takes any other for the same failure and keeps only the smallest)."""
        nonlocal set_aside
        for other in session.other_departures(
                named | set_aside, lambda f: None if explained_before(f) else tidy(f, session.set_aside)):
            found(other, aside=session.set_aside, tidied=True)
            set_aside = set_aside | set(other.rules)

    sessions = []
    # A round whose departures the ones recorded already explain (known, or named by them) found nothing new:
    # it does not use up a round, up to FREE_ROUNDS such rounds an area (on a system on the virtual clock,
    # where a round costs little; on the wall clock a round and its shrinking take minutes).
    free = 0 if adapter.capabilities().realtime or rounds is None else FREE_ROUNDS
    searched = ran = 0

    def spent(session, began: float) -> None:
        """Count a round's cases and its time: searching up to its first departure, shrinking after.  A
        case a departure already found cut short is not counted against the budget (it searched little),
        up to :data:`CUT_SHORT_BUDGET` times the budget in cases run in all."""
        nonlocal searched, ran
        searched += session.searched - session.cut_short
        ran += session.searched
        record.cut_short += session.cut_short
        now = time.monotonic()
        departed = session.departed_at if session.departed_at is not None else now
        record.spend("search", departed - began)
        record.spend("shrink", now - departed)

    while (rounds is None or rounds > 0) and searched < examples and ran < CUT_SHORT_BUDGET * examples \
            and not (deadline is not None and time.time() >= deadline):
        recorded = len(record.failures)
        hear()
        # each round its own cases (the run's seed and the round's number): the cases of the rounds before
        # ran already, up to the departure each met, and are not run again
        named_now = frozenset(r for f in record.failures for r in f.blamed) | declared | broken_before
        machine = bound_machine(adapter, area, platform, None if seed is None else seed + len(sessions),
                                adapter_options, record.coverage, set_aside,
                                deadline=deadline, shrink_budget=shrink_cases, shrink_seconds=shrink_seconds,
                                named=named_now, undecided=undecided_elsewhere(),
                                explained=shrinks_no_further(named_now))
        sessions.append(machine.session)
        began = time.monotonic()
        try:
            try:
                cases = min(examples - searched, CUT_SHORT_BUDGET * examples - ran)
                # bounded by time: in chunks, so that a round ends soon after the time is up (the cases
                # Hypothesis still draws after it run nothing, but drawing them costs about as much)
                ended = search(machine, machine_settings(cases if deadline is None else min(cases, TIME_CHUNK)))
            finally:
                spent(machine.session, began)
        except KeyboardInterrupt:
            if machine.session.smallest is not None:  # found, not yet shrunk to the end: keep it
                record.add_failure(machine.session.smallest)
                for other in machine.session.departures_besides(machine.session.smallest.rules):
                    record.add_failure(other)
            raise
        except HarnessError as exc:
            record.error = str(exc)
            outcome = "error"
            break
        if ended.departure is None:
            if deadline is None:
                break   # the round spent the budget with no departure
            continue
        use_round()
        explained = False
        # minimised, an unsteady departure is replayed on a fresh case: shown again (whole or a part of it), it
        # is reproduced
        found(ended.departure, not_reproduced=ended.unsteady and not minimise_histories,
              aside=machine.session.set_aside)
        if explained and searched > 0:
            # the case that met it was cut short by a departure found elsewhere (another worker's, or the
            # workers' for the restart phase): counted as such, not against the budget of cases searched
            searched -= 1
            record.cut_short += 1
        # like any other, it is set aside for the next round
        set_aside = set_aside | set(ended.departure.rules)
        besides(machine.session)
        if len(record.failures) == recorded and free > 0 and rounds is not None:
            free -= 1
            rounds += 1
        if machine.session.searched == 0:
            break   # a round that searched nothing (its time was up): the next would do the same
    for kept in recorded_before:
        # (after the search: what it found is shrunk and minimised as ever; a recorded departure it did not meet
        # is evidence all the same, where the system shows it again)
        if kept.failure.area != area or kept.failure.platform != platform:
            continue
        # (the search's own failure of the same rules, where its history was not shown again and the recorded one
        # was: the recorded one, shown again, replaces it)
        searched_found = set(kept.failure.blamed) <= known_now() and not _settles(kept.failure, record.coverage)
        weaker = _shown_better(kept.failure, record.failures) if searched_found else None
        if searched_found and weaker is None:
            shown, again = FOUND, None
        else:
            try:
                shown, again = replay_recorded(adapter, kept.failure, adapter_options, record.coverage)
            except HarnessError as exc:
                record.error = str(exc)
                return "error", time.monotonic() - started
        # (minimised as any departure the run meets: a history recorded long, a real system's timing having ended
        # its minimising early, is published no longer than it needs to be)
        if again is not None and weaker is not None:
            shown = CONFIRMED if found(again, aside=frozenset(kept.failure.set_aside), instead_of=weaker) else FOUND
        elif again is not None and found(again, aside=frozenset(kept.failure.set_aside)) is None:
            shown = EXPLAINED   # shown again, and what the run found broken explains it: nothing new
        record.recorded.append({"file": kept.name, "area": area, "platform": platform, "shown": shown})
        if on_update is not None:
            on_update(record)
    if any(s.shrink_timed_out for s in sessions):
        record.timed_shrinks.append(f"{area} on {platform}")
    # (departures of rules another area found broken, which a case went on past, were met all the same)
    passed = frozenset(r for s in sessions for r in s.met_known) - frozenset(broken) - declared
    if passed:
        met = True
        met_known.update(passed)
    if outcome == "conformant" and met:
        outcome = ("no new departure (only departures that rules found broken before explain"
                   + (": " + ", ".join(sorted(met_known)) if met_known else "") + ")")
    if outcome == "conformant" and not any(record.coverage.checked[r.id] for r in RULES.all(area)):
        outcome = "no rule exercised"
    return outcome, time.monotonic() - started


def _shown_better(recorded, failures):
    """The failure of ``failures`` (the run's) whose departure ``recorded``, a recorded counterexample, shows
    better (:func:`_better`); None where there is none."""
    return next((f for f in failures if _better(recorded, f)), None)


def _better(new, old) -> bool:
    """Whether ``new`` is better evidence of ``old``'s departure: the same area, platform and rules, its history shown
    again where ``old``'s was not, its blame confirmed where ``old``'s is."""
    return new.reproduced and not old.reproduced \
        and (new.area, new.platform, set(new.blamed), new.one_of) == (old.area, old.platform, set(old.blamed),
                                                                      old.one_of) \
        and (new.mismatch.confirmed or not old.mismatch.confirmed)


def _settles(failure, coverage) -> bool:
    """Whether ``failure``, a recorded departure blamed on one rule alone, would settle a "one of" the run found:
    its rule found broken only as one of several, which the recorded history shows broken alone (the search took
    another path and met the departure only in a history that does not show which rule it breaks)."""
    return len(failure.blamed) == 1 and failure.mismatch.confirmed and coverage.only_one_of(failure.blamed[0])


def _again(adapter: Adapter, earlier, platform: str, adapter_options: dict | None, record: RunRecord):
    """``earlier``'s history run as one case on ``platform``: the same departure again, or None."""
    from adapters.reference import ReferenceAdapter
    from reference_model.model import HistoryError

    model = ReferenceAdapter(platform=platform)
    model.start_case("again", platform)
    try:
        for step in earlier.steps:
            model.execute(step.op)
    except Exception:  # noqa: BLE001 - HistoryError and the like: a history this platform cannot run
        return None
    session = Session(adapter, earlier.area, adapter_options, earlier.seed, coverage=record.coverage,
                      platform=platform, replaying=True)
    # (a history this platform cannot run, HistoryError: its departures are searched for afresh)
    again = one_case(session, [step.op for step in earlier.steps], tolerated=(HistoryError,))
    if again is None or again.mismatch.fields != earlier.mismatch.fields or set(again.rules) != set(earlier.rules):
        return None
    return again


class Interrupted(KeyboardInterrupt):
    """A run stopped by SIGINT or SIGTERM; carries the record of what it had found."""

    def __init__(self, record: RunRecord) -> None:
        super().__init__("interrupted")
        self.record = record


@with_frame_room
def run_areas(adapter: Adapter, areas: list[str], examples: int, seed: int | None,
              adapter_options: dict | None = None,
              progress: Callable[[str], None] | None = None, keep_going: int | None = 0,
              on_update: Callable[[RunRecord], None] | None = None,
              minimise_histories: bool = True, shrink_seconds=BY_SYSTEM, shrink_cases=BY_SYSTEM,
              seconds: float | None = None, found_before: tuple = (),
              elsewhere: Callable[[], tuple] | None = None, minimise_seconds: float | None = None,
              recorded: tuple = ()) -> RunRecord:
    """Run each area's machine against ``adapter``; returns the run's record (``found_before``,
    ``elsewhere``, ``minimise_seconds`` and ``recorded``: see :func:`run_area`).

    ``seconds``: a time budget for searching, shared out among the areas and platforms still to run
    (each gets an equal share of what is left when it starts); a departure met within its share is
    shrunk and minimised to the end.

    ``on_update(record)`` is called after each departure found and each area, so
    the caller can write what was found so far.  On KeyboardInterrupt the record
    so far (the areas not finished marked interrupted) goes up in :class:`Interrupted`.
    """
    caps = adapter.capabilities()
    try:
        describe = adapter.describe()
    except AdapterError as exc:
        raise HarnessError(f"adapter {adapter.name!r}: {exc}") from exc
    record = RunRecord(adapter=adapter.name, describe=describe, capabilities=caps.to_json(),
                       areas=list(areas), seed=seed, examples=examples)
    told = 0

    def updated(record: RunRecord) -> None:
        """Hand the record on as it grows, and say each departure as soon as it is minimised and
        recorded, before the run goes on with other platforms and areas."""
        nonlocal told
        if on_update is not None:
            on_update(record)
        for failure in record.failures[told:] if progress else ():
            also = f" (also mentioned: {', '.join(failure.mentioned)})" if failure.mentioned else ""
            progress(f"{failure.area} on {failure.platform}: departure from {failure.blamed_text}{also}, "
                     f"{len(failure.steps)} steps")
        told = len(record.failures)

    end = None if seconds is None else time.time() + seconds
    left = sum(len(area_platforms(area, caps)) for area in areas)
    for index, area in enumerate(areas):
        platforms = area_platforms(area, caps)
        if not platforms and progress:
            progress(f"{area}: not applicable to adapter {adapter.name!r}")
        for platform in platforms:
            deadline = None if end is None else time.time() + max(0.0, end - time.time()) / left
            left -= 1
            try:
                outcome, spent = run_area(adapter, area, platform, examples, seed, adapter_options, record,
                                          keep_going, updated, minimise_histories, shrink_seconds,
                                          shrink_cases, deadline=deadline, found_before=found_before,
                                          elsewhere=elsewhere, minimise_seconds=minimise_seconds,
                                          recorded_before=recorded)
            except KeyboardInterrupt:
                record.interrupted = list(areas[index:])
                record.ended = time.time()
                raise Interrupted(record) from None
            record.seconds[f"{area} on {platform}"] = round(spent, 3)
            if progress:
                progress(f"{area} on {platform}: {outcome} in {spent:.1f}s")
            if record.error:
                # the areas finished before keep their verdicts; this one and the rest have none
                record.errored = list(areas[index:])
                break
        updated(record)
        if record.error:
            break
    record.ended = time.time()
    if record.coverage.examples == 0 and record.error is None:
        whys = {record.why_not_applicable(rule) for area in areas for rule in RULES.all(area)}
        record.error = "no test case ran: none of the areas " + ", ".join(areas) + \
            f" is applicable to adapter {adapter.name!r}" + (f": {whys.pop()}" if len(whys) == 1 else "")
    elif record.error is None and not record.interrupted:
        rows = record.rule_rows()
        why = vacuity(rows, areas, record.coverage.examples)
        if why is not None:
            record.error = f"{why} (adapter {adapter.name!r} expressed none of the operations its checks need " \
                "in the cases run)"
            record.errored = unreached_areas(rows, areas)
    return record
