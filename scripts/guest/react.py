# SPDX-License-Identifier: GPL-2.0
"""The policy's reaction to a load change, from what bench-run sampled
(sample=react): the commands in flight at 50 ms ticks and the queues'
delays as events (time, queue, delay).  Used in the guest by bench-run
and on the host by bench.py, which computes it again from the stored
series (REPLOT=1).
"""
import bisect
import statistics


class Timeline:
    """The largest delay over the queues, as the events set it in time."""

    def __init__(self, events):
        state, self.times, self.top = {}, [], []
        for t, q, d in sorted(events):
            state[q] = d
            self.times.append(t)
            self.top.append(max(state.values()))

    def at(self, t):
        i = bisect.bisect_right(self.times, t)
        return self.top[i - 1] if i else 0

    def first(self, ticks, t0, on):
        """Seconds from T0 to the first of the TICKS at which a queue is
        moderated (ON) or none is.  The kernel's delays are read at the
        ticks and nvme-coal's decisions are timed exactly: both are judged
        at the ticks, so that neither is favoured."""
        for t in ticks:
            if t >= t0 and (self.at(t) > 0) == on:
                return t - t0
        return None


def reaction(depth, events, deep):
    """Milliseconds from the deep load's start (the commands in flight
    first above DEEP at a tick) to a queue moderated, and, if one was,
    from its end (in flight back to 2 or fewer after the last tick above
    DEEP) to none; None where it did not happen while sampled."""
    tl = Timeline(events)
    ticks = [t for t, _ in depth]
    deep_ticks = [t for t, n in depth if n > deep]
    out = {}
    if not deep_ticks:
        return out
    # (the commands in flight dip now and then within the deep load: its
    # end follows its last deep tick)
    start, last = deep_ticks[0], deep_ticks[-1]
    end = next((t for t, n in depth if t > last and n <= 2), None)
    dt = tl.first(ticks, start, True)
    out['engage_ms'] = None if dt is None else round(dt * 1000)
    if end is not None and dt is not None and start + dt <= end:
        dt = tl.first(ticks, end, False)
        out['release_ms'] = None if dt is None else round(dt * 1000)
    return out


def moderated(depth, events, t0, t1):
    """The share of the ticks in [T0, T1] at which a queue was moderated,
    and the median over them of the largest delay (CoalSampler's
    coal_delay_us and coal_moderated_frac are per queue)."""
    tl = Timeline(events)
    top = [tl.at(t) for t, _ in depth if t0 <= t <= t1]
    busy = [d for d in top if d > 0]
    if not top:
        return {}
    return {'react_delay_us': statistics.median(busy) if busy else 0,
            'react_moderated_frac': round(len(busy) / len(top), 3)}
