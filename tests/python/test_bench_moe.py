# SPDX-License-Identifier: Apache-2.0
"""python -m hgemm.bench_moe: the expert sizes it routes and its arguments, on the CPU (the timed
block itself needs a GPU and torch)."""
import pytest

from hgemm.bench_moe import BLOCKS, expert_rows, main, parse_blocks


@pytest.mark.parametrize("experts,rows", [(8, 8192), (64, 24576), (8, 64), (5, 3), (1, 7), (3, 0)])
@pytest.mark.parametrize("skew", [0.0, 0.5, 1.0, 2.0])
def test_expert_rows_sum_to_the_routed_rows_and_fall_with_the_expert(experts, rows, skew):
    counts = expert_rows(experts, rows, skew)
    assert len(counts) == experts and sum(counts) == rows and min(counts) >= 0
    assert all(a >= b for a, b in zip(counts, counts[1:])), counts  # the first expert is the busiest
    if skew == 0:
        assert max(counts) - min(counts) <= 1, counts  # an even split


def test_skew_gives_the_first_expert_its_share():
    counts = expert_rows(8, 8000, 1.0)
    share = 1 / sum(1 / (e + 1) for e in range(8))
    assert abs(counts[0] - 8000 * share) <= 1 and counts[0] > 3 * counts[7]


def test_expert_rows_refuses_bad_sizes():
    for args in ((0, 10, 1.0), (4, -1, 1.0), (4, 10, -0.5)):
        with pytest.raises(ValueError):
            expert_rows(*args)


def test_blocks_parse_and_bad_ones_are_refused():
    assert parse_blocks("8:2:4096:4096:14336, 64:6:32:2048:1408") == [(8, 2, 4096, 4096, 14336), (64, 6, 32, 2048, 1408)]
    assert all(len(b) == 5 and b[1] <= b[0] for b in BLOCKS)
    for bad in ("8:2:4096", "8:9:16:16:16", "8:2:0:16:16", "a:2:16:16:16"):
        with pytest.raises(SystemExit) as e:
            main(["--blocks", bad])
        assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["--skew", "-1"])
    assert e.value.code == 2
