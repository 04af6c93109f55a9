"""The queue of a pass's jobs (core.engine.jobs): which jobs count as unclaimed, and what
dropping the jobs of schedules another engine took leaves behind."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.engine.jobs import Job, Jobs

#: (schedule, limited to given occurrences, queued again) for each job; none has a claim.
Shape = tuple[str, bool, bool]

shapes = st.lists(st.tuples(st.sampled_from("abcde"), st.booleans(), st.booleans()), max_size=12)


def _jobs(shape: list[Shape]) -> list[Job]:
    return [Job(sid, ["occ"] if only else None, again=again) for sid, only, again in shape]


def _waiting(jobs: Jobs) -> list[Job]:
    taken = []
    while (job := jobs.take()) is not None:
        taken.append(job)
    return taken


def test_a_job_limited_queued_again_or_with_a_claim_is_not_unclaimed() -> None:
    plain, limited, again = _jobs([("a", False, False), ("b", True, False), ("c", False, True)])
    queue = Jobs([plain, limited, again])
    assert queue.unclaimed() == [plain]
    assert queue.drop({"a", "b", "c"}) == [plain]
    assert _waiting(queue) == [limited, again]


@given(shapes, st.sets(st.sampled_from("abcde")))
def test_drop_takes_out_exactly_the_unclaimed_jobs_of_those_schedules(shape: list[Shape], taken: set[str]) -> None:
    jobs = _jobs(shape)
    queue = Jobs(jobs)
    unclaimed = queue.unclaimed()
    dropped = queue.drop(taken)
    assert [id(job) for job in dropped] == [id(job) for job in unclaimed if job.schedule_id in taken]
    left = _waiting(queue)
    # Every job is either dropped or still waiting, in the order it was queued.
    assert [id(job) for job in left] == [id(job) for job in jobs if all(job is not d for d in dropped)]
    assert all(job.schedule_id not in taken for job in left if job.only is None and not job.again)
