"""The perturbative steps' options: text from the CLI normalized, bad values refused with
the option, the value and the allowed range."""

from types import MappingProxyType

import pytest

from microagg.steps.perturb import Noise, Pram, RankSwap, Shuffle


def test_text_options_are_normalized():
    step = Pram("sex, region", pd="0.9", alpha="0", invariant="false",
                matrix='{"sex": {"m": {"m": 0.9, "f": 0.1}, "f": {"f": 1}}}')
    assert step.variables == ("sex", "region") and step.columns == ("sex", "region")
    assert step.pd == 0.9 and step.alpha == 0.0 and step.invariant is False
    assert isinstance(step.matrix, MappingProxyType)
    assert dict(step.matrix["sex"]["m"]) == {"m": 0.9, "f": 0.1}
    assert hash(Noise("a,b", method="ROMM", noise="0.2", block_size="50")) is not None
    assert Noise("a,b", method="ROMM").method == "romm"
    assert RankSwap("a", p="15").p == 15.0
    assert Shuffle("a", given="b,c").given == ("b", "c")


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, "x"])
def test_pd_outside_zero_one_is_refused(bad):
    with pytest.raises(ValueError, match=r"'pd' option of step 'pram' must be a (finite )?number in "
                                         r"\(0, 1\]"):
        Pram("a", pd=bad)


def test_matrix_rows_must_sum_to_one_and_be_probabilities():
    with pytest.raises(ValueError, match=r"column 'sex', row 'm' sums to 0.8"):
        Pram("sex", matrix={"sex": {"m": {"m": 0.7, "f": 0.1}, "f": {"f": 1.0}}})
    with pytest.raises(ValueError, match=r"row 'm': the probability of 'f' must be a "
                                         r"number in \[0, 1\]. Got -0.1"):
        Pram("sex", matrix={"sex": {"m": {"m": 1.0, "f": -0.1}, "f": {"f": 1.0}}})
    with pytest.raises(ValueError, match=r"moves to 'x', which has no row of its own"):
        Pram("sex", matrix={"sex": {"m": {"x": 1.0}, "f": {"f": 1.0}}})
    with pytest.raises(ValueError, match=r"has matrices for \['age'\]"):
        Pram("sex", matrix={"age": {"1": {"1": 1.0}}})


@pytest.mark.parametrize("bad", [0, -5, 100.5])
def test_rank_window_outside_zero_hundred_is_refused(bad):
    with pytest.raises(ValueError, match=r"'p' option of step 'rank_swap' must be a number "
                                         r"in \(0, 100\]"):
        RankSwap("a", p=bad)


def test_noise_options_are_checked():
    with pytest.raises(ValueError, match=r"'noise' option of step 'noise' must be a number "
                                         r"in \(0, 10\]. Got 0"):
        Noise("a", noise=0)
    with pytest.raises(ValueError, match="must be one of additive, correlated, romm"):
        Noise("a", method="restr")
    with pytest.raises(ValueError, match="at least 2 columns for method 'correlated'"):
        Noise("a", method="correlated")
    with pytest.raises(ValueError, match=r"'given' option of step 'shuffle' names \['a'\]"):
        Shuffle("a,b", given="a")
