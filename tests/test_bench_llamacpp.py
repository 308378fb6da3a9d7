"""bench.llamacpp: the figures, ratios, identity counts and the enforce_eager conclusion on fixed numbers; the prompt
llama.cpp gets is the one our engine's worker renders; one tiny run of both engines (marked engine, slow)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.llamacpp import chat_prompts, main, positive_int
from bench.support.llamacpp_results import DRAFT_COMPILED, DRAFT_EAGER, LLAMA, NO_DRAFT, RESTART_REPORTS, Results, Tally
from bench.support.llamacpp_section import eager_conclusion, headline_goal, identical, markdown, report_tokens, vs_llama
from edge_agent.llm.chat import render_chat

ROOT = Path(__file__).resolve().parents[1]
MODEL_DIR = ROOT / "models" / "default"
needs_model = pytest.mark.skipif(not (MODEL_DIR / "tokenizer.json").exists(), reason="model not prepared")

SETTINGS = {
    "model_dir": "models/default",
    "dtype": "float32",
    "default_eager": True,
    "draft": "assets/eagle31-smollm2-135m",
    "k": 4,
    "gguf": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "llama_cpp": "0.3.36",
}


def tally(
    start_s: float, report: tuple[int, float], test: tuple[int, float], ids: list[list[int]], **kw: object
) -> Tally:
    """Two prompts, one per slice: (tokens, seconds) of each."""
    return Tally(
        start_s=start_s,
        tokens={"report": report[0], "test": test[0]},
        seconds={"report": report[1], "test": test[1]},
        token_ids=ids,
        texts=kw.pop("texts", ["a", "b"]),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def results(
    compiled_start: float = 60.0,
    compiled: tuple[float, float] = (1.0, 1.0),
    restarts: tuple[float, float] | None = None,
) -> Results:
    """Reference and eager draft at 100 and 200 tok/s, llama.cpp at 100; compiled as given (seconds per slice);
    `restarts`: the eager and compiled draft engines' restart seconds (None: not measured, as in older runs)."""
    r = Results(
        command=".venv/bin/python -m bench.llamacpp",
        max_tokens=100,
        prompt_slices=["report", "test"],
        settings=SETTINGS,
        load=(1.5, 2.0),
        engines={
            NO_DRAFT: tally(10.0, (100, 1.0), (100, 1.0), [[1, 2], [3]]),
            DRAFT_EAGER: tally(12.0, (100, 0.5), (100, 0.5), [[1, 2], [3]], accepted=30, drafts=20),
            DRAFT_COMPILED: tally(compiled_start, (100, compiled[0]), (100, compiled[1]), [[1, 2], [4]]),
            LLAMA: tally(2.0, (100, 1.25), (100, 0.75), [], texts=["a", "c"]),
        },
    )
    if restarts is not None:
        r.engines[DRAFT_EAGER].restart_s, r.engines[DRAFT_COMPILED].restart_s = restarts
    return r


class TestTally:
    def test_tokens_per_second_is_summed_tokens_over_summed_seconds(self) -> None:
        """Per slice, and overall as total tokens over total seconds (not a mean of rates)."""
        t = tally(0.0, (100, 1.25), (100, 0.75), [])
        assert t.tokens_per_s("report") == 80.0
        assert t.tokens_per_s("test") == pytest.approx(133.333, abs=1e-3)
        assert t.tokens_per_s() == 100.0

    @given(
        st.lists(
            st.tuples(st.integers(2, 4096), st.floats(1e-2, 1e3), st.floats(0.01, 0.99)),
            min_size=1,
            max_size=20,
        )
    )
    def test_decode_rate_lies_between_the_requests_decode_rates(self, requests: list[tuple[int, float, float]]) -> None:
        """Property: over any requests (tokens, seconds, prefill share), the decode rate is summed tokens after the
        first over summed seconds after the prefill — between the slowest and the fastest request's own rate."""
        t = Tally()
        rates = []
        for tokens, seconds, share in requests:
            t.add("report", tokens, seconds, "", None, seconds * share)
            rates.append((tokens - 1) / (seconds - seconds * share))
        rate = t.decode_tokens_per_s()
        assert rate is not None
        assert min(rates) * (1 - 1e-9) <= rate <= max(rates) * (1 + 1e-9)

    def test_tau_is_one_plus_accepted_per_drafting_step(self) -> None:
        assert Tally(accepted=30, drafts=20).tau == 2.5
        assert Tally().tau is None

    def test_add_accumulates_by_slice_and_keeps_order(self) -> None:
        t = Tally()
        t.add("report", 10, 0.5, "x", [1])
        t.add("test", 4, 0.25, "y", None)
        t.add("report", 6, 0.5, "z", [2])
        assert (t.tokens, t.seconds, t.texts, t.token_ids, t.requests) == (
            {"report": 16, "test": 4},
            {"report": 1.0, "test": 0.25},
            ["x", "y", "z"],
            [[1], [2]],
            {"report": 2, "test": 1},
        )

    @given(
        st.lists(
            st.tuples(st.sampled_from(["report", "test"]), st.integers(0, 4096), st.floats(1e-3, 1e3)),
            min_size=1,
            max_size=20,
        )
    )
    def test_overall_rate_lies_between_the_slice_rates(self, requests: list[tuple[str, int, float]]) -> None:
        """Property: the overall rate is a seconds-weighted mean of the per-slice rates."""
        t = Tally()
        for name, tokens, seconds in requests:
            t.add(name, tokens, seconds, "", None)
        rates = [t.tokens_per_s(name) for name in t.tokens]
        assert min(rates) - 1e-9 <= t.tokens_per_s() <= max(rates) + 1e-9
        assert t.tokens_per_s() == pytest.approx(sum(r[1] for r in requests) / sum(r[2] for r in requests))


class TestFigures:
    def test_ratio_is_against_llama_cpp_overall_and_per_slice(self) -> None:
        r = results()
        assert vs_llama(r, DRAFT_EAGER) == 2.0
        assert vs_llama(r, DRAFT_EAGER, "report") == 2.5  # 200 vs 80 tok/s
        assert vs_llama(r, LLAMA) == 1.0

    def test_no_ratio_without_llama_cpp(self) -> None:
        r = results()
        del r.engines[LLAMA]
        assert vs_llama(r, DRAFT_EAGER) is None

    def test_identical_counts_token_ids_for_ours_and_text_for_llama_cpp(self) -> None:
        r = results()
        assert identical(r, DRAFT_EAGER) == 2
        assert identical(r, DRAFT_COMPILED) == 1  # [4] != [3]
        assert identical(r, LLAMA) == 1  # "c" != "b"

    def test_a_report_is_every_section_at_the_mean_report_answer(self) -> None:
        assert report_tokens(results()) == 5 * 100  # 5 sections, one report prompt of 100 tokens

    def test_results_survive_a_json_round_trip(self) -> None:
        r = results()
        assert Results.from_json(r.to_json()) == r


class TestEagerConclusion:
    def test_no_gain_keeps_eager(self) -> None:
        """Compiled at 200 tok/s like eager: no gain, 48 s more start-up."""
        text = eager_conclusion(results(compiled=(0.5, 0.5)))
        assert text == (
            "**The figures justify `enforce_eager = true`**: compiled decoding ran at 1.00× eager (no gain beyond 5% "
            "noise) and started 48 s later."
        )

    def test_without_a_restart_a_gain_must_pay_back_within_the_first_report(self) -> None:
        """No restart measured (an older run): compiled 400 tok/s vs 200, 1/400 s saved per token; 1 s more
        start-up is back after 400 tokens, within a report of 500."""
        text = eager_conclusion(results(compiled_start=13.0, compiled=(0.25, 0.25)))
        assert text == (
            "**The figures justify `enforce_eager = false`**: compiled decodes at 2.00× eager and wins its 1 s of "
            "extra start-up back after 400 tokens (≈ 0.8 reports), within the first report."
        )

    def test_a_restart_won_back_within_a_week_of_reports_justifies_compiled(self) -> None:
        """Eager 125 tok/s, compiled 400 (0.0055 s saved per token): a cold start 48 s longer, but a restart only
        20 s longer (10 s vs 30 s): back after 3636 tokens, 7.3 reports of 500, within RESTART_REPORTS (21)."""
        r = results(compiled=(0.25, 0.25), restarts=(10.0, 30.0))
        r.engines[DRAFT_EAGER].seconds = {"report": 0.8, "test": 0.8}  # 125 tok/s
        assert RESTART_REPORTS == 21
        assert eager_conclusion(r) == (
            "**The figures justify `enforce_eager = false`**: compiled decodes at 3.20× eager and wins its 20 s of "
            "extra restart (warm kernel cache) back after 3636 tokens (≈ 7.3 reports), within 21 reports. Only "
            "compiled meets the ≥ 1.5× llama.cpp goal (4.00× vs 1.25×)."
        )

    def test_a_restart_not_won_back_within_a_week_of_reports_keeps_eager(self) -> None:
        """The same rates with a restart 70 s longer (10 s vs 80 s): 12727 tokens, 25 reports of 500 > 21."""
        r = results(compiled=(0.25, 0.25), restarts=(10.0, 80.0))
        r.engines[DRAFT_EAGER].seconds = {"report": 0.8, "test": 0.8}
        assert eager_conclusion(r) == (
            "**The figures justify `enforce_eager = true`**: compiled decodes at 3.20× eager, but its 70 s of extra "
            "restart (warm kernel cache) take 12727 tokens (≈ 25 reports) to win back, not within 21 reports. Only "
            "compiled meets the ≥ 1.5× llama.cpp goal (4.00× vs 1.25×)."
        )

    def test_a_gain_too_slow_to_pay_back_keeps_eager_and_names_the_goal(self) -> None:
        """Eager 125 tok/s, compiled 400: 48 s more start-up at 1/125 - 1/400 = 0.0055 s saved per token is
        8727 tokens ≈ 17 reports of 500; against llama.cpp at 133.3 tok/s only compiled is ≥ 1.5×."""
        r = results(compiled=(0.25, 0.25))
        r.engines[LLAMA] = tally(2.0, (100, 0.75), (100, 0.75), [], texts=["a", "c"])  # 133.3 tok/s
        r.engines[DRAFT_EAGER] = tally(12.0, (100, 0.8), (100, 0.8), [[1, 2], [3]])  # 125 tok/s: 0.94×
        text = eager_conclusion(r)
        assert text == (
            "**The figures justify `enforce_eager = true`**: compiled decodes at 3.20× eager, but its 48 s of extra "
            "start-up take 8727 tokens (≈ 17 reports) to win back, not within the first report. Only compiled meets "
            "the ≥ 1.5× llama.cpp goal (3.00× vs 0.94×)."
        )

    def test_no_conclusion_without_both_draft_engines(self) -> None:
        r = results()
        del r.engines[DRAFT_COMPILED]
        assert eager_conclusion(r) is None


class TestMarkdown:
    def test_table_rows_carry_start_up_rates_ratios_tau_and_identity(self) -> None:
        body = markdown(results())
        assert (
            "| engine | start-up s | restart s | tok/s report | tok/s test | tok/s overall | "
            "× llama.cpp (100.0 tok/s) | × llama.cpp report (80.0 tok/s) | × llama.cpp test (133.3 tok/s) | τ | "
            "identical to no draft |"
        ) in body
        assert (
            "| ours, no draft (reference), eager | 10.0 | — | 100.0 | 100.0 | 100.0 | 1.00× | 1.25× | 0.75× | — | — |"
            in body
        )
        assert (
            "| ours, EAGLE k=4, eager (agent default) | 12.0 | — | 200.0 | 200.0 | 200.0 | 2.00× | 2.50× | 1.50× | "
            "2.50 | 2/2 |"
        ) in body
        assert (
            "| ours, EAGLE k=4, compiled | 60.0 | — | 100.0 | 100.0 | 100.0 | 1.00× | 1.25× | 0.75× | — | 1/2 |" in body
        )
        assert (
            "| llama.cpp 0.3.36, SmolLM2-135M-Instruct.Q4_1.gguf | 2.0 | — | 80.0 | 133.3 | 100.0 | 1.00× | 1.00× | "
            "1.00× | — | 1/2 (text) |"
        ) in body

    def test_restarts_and_the_compiled_default_are_shown(self) -> None:
        """A measured restart fills its column and the conclusion's line; with compiled the default, its row is
        the one marked."""
        r = results(restarts=(11.0, 25.0))
        r.settings = SETTINGS | {"default_eager": False}
        body = markdown(r)
        assert "| ours, EAGLE k=4, compiled (agent default) | 60.0 | 25.0 | 100.0 |" in body
        assert "| ours, EAGLE k=4, eager | 12.0 | 11.0 | 200.0 |" in body
        assert "first start 12 s eager vs 60 s compiled (an empty kernel cache), restart 11 s vs 25 s;" in body

    def test_goal_lines_say_met_or_missed(self) -> None:
        """Per slice, the issue's goal (2.5× on report prompts, 1.5× on the rest); identity required at float32."""
        body = markdown(results())
        assert (
            "- Goal ≥ 2.5× llama.cpp end to end on report prompts at output identical to ours without a draft, ours, "
            "EAGLE k=4, eager (agent default): 2.50× (200.0 tok/s against llama.cpp's 80.0), identical to no draft "
            "2/2 (required): **met**."
        ) in body
        assert (
            "- Goal ≥ 1.5× llama.cpp end to end on test prompts at output identical to ours without a draft, ours, "
            "EAGLE k=4, eager (agent default): 1.50× (200.0 tok/s against llama.cpp's 133.3), identical to no draft "
            "2/2 (required): **met**."
        ) in body
        assert (
            "on report prompts at output identical to ours without a draft, ours, EAGLE k=4, compiled: 1.25× (100.0 "
            "tok/s against llama.cpp's 80.0), identical to no draft 1/2 (required): **missed**."
        ) in body
        assert "decode" not in body  # no prefill timed: no decode rates
        r = results(compiled=(0.25, 0.25))
        r.settings = SETTINGS | {"dtype": "int8"}
        assert (
            "- Goal ≥ 2.5× llama.cpp end to end on report prompts at int8, ours, EAGLE k=4, compiled: 5.00× (400.0 "
            "tok/s against llama.cpp's 80.0), identical to no draft 1/2 (recorded): **met**."
        ) in markdown(r)

    def test_decode_rates_get_their_own_table_and_goal_lines(self) -> None:
        """With prefills timed: report 100 tokens in 1.0 s of which 0.5 s prefill is 99/0.5 = 198 tok/s decoding."""
        r = results()
        r.engines[NO_DRAFT].prefill_s = {"report": 0.5, "test": 0.2}
        r.engines[DRAFT_EAGER].prefill_s = {"report": 0.25, "test": 0.1}
        r.engines[LLAMA].prefill_s = {"report": 0.75, "test": 0.25}
        for t in r.engines.values():
            t.requests = {"report": 1, "test": 1}
        assert r.engines[NO_DRAFT].decode_tokens_per_s("report") == 198.0
        assert r.engines[DRAFT_COMPILED].decode_tokens_per_s() is None
        assert vs_llama(r, DRAFT_EAGER, "report", decode=True) == pytest.approx(396 / 198)  # 99/0.25 vs 99/0.5
        body = markdown(r)
        assert (
            "| engine | decode tok/s report | decode tok/s test | decode tok/s overall | × llama.cpp (198.0 tok/s) | "
            "× llama.cpp report (198.0 tok/s) | × llama.cpp test (198.0 tok/s) | "
        ) in body
        # llama.cpp: 99/0.5 = 198 tok/s on both slices
        assert "| ours, no draft (reference), eager | 198.0 | 123.8 | 152.3 | 0.77× | 1.00× | 0.62× | " in body
        assert "| ours, EAGLE k=4, compiled |" not in body.split("decode rate:")[1].split("- Goal")[0]
        assert "| ours, EAGLE k=4, eager (agent default) | 396.0 | 247.5 | 304.6 | 1.54× | 2.00× | 1.25× | " in body
        assert "Mean prefill per request: ours, no draft (reference), eager 0.35 s," in body

    def test_machine_load_llama_note_and_conclusion_are_there(self) -> None:
        body = markdown(results())
        assert "Load average 1.5 before the engines started, 2.0 at the end." in body
        assert "its text equals ours on 1/2 prompts, for information." in body
        assert "first start 12 s eager vs 60 s compiled (an empty kernel cache); a report is ≈ 500 tokens here" in body
        assert "**The figures justify `enforce_eager = true`**" in body

    def test_headline_is_the_default_engine_against_llama_cpp_with_both_rates(self) -> None:
        """The section's headline and goal: the agent default's end-to-end ratio, llama.cpp's own tok/s beside it."""
        headline, goal = headline_goal(results())
        assert headline == (
            "2.00× llama.cpp end to end, ours, EAGLE k=4, eager (agent default) (200.0 tok/s against llama.cpp's "
            "100.0; report 2.50×, test 1.50×)"
        )
        assert goal == "end to end against llama.cpp ≥ 2.5× on report and ≥ 1.5× on test at identical output: **met**"
        at_int8 = results(compiled=(0.25, 0.25))
        at_int8.settings = SETTINGS | {"dtype": "int8", "default_eager": False}
        # compiled differs from the no-draft reference on 1 of 2 prompts: recorded at int8, not required
        assert headline_goal(at_int8)[1] == (
            "end to end against llama.cpp ≥ 2.5× on report and ≥ 1.5× on test at int8: **met**"
        )
        r = results(compiled=(2.0, 2.0))
        r.settings = SETTINGS | {"default_eager": False}
        headline, goal = headline_goal(r)
        assert headline.startswith("0.50× llama.cpp end to end, ours, EAGLE k=4, compiled (agent default) (50.0 tok/s")
        assert goal.endswith("**missed**")
        del r.engines[LLAMA]
        assert headline_goal(r)[1] == "≥ 1.5× llama.cpp end to end: not measured"

    def test_the_run_survives_a_json_round_trip(self) -> None:
        """Saved results keep when, where and at which commit they ran: --markdown-only writes the same header."""
        from bench.report import RunInfo

        r = results()
        run = RunInfo("2026-12-04 02:31 UTC", "x86_64, 2 CPUs, Python 3.11.7", "33c77bb")
        r.run = run.as_dict()
        assert RunInfo.from_dict(Results.from_json(r.to_json()).run) == run
        assert RunInfo.from_dict(Results.from_json(results().to_json()).run) is None

    def test_a_subset_without_llama_cpp_has_no_ratios_or_goal(self) -> None:
        r = results()
        del r.engines[LLAMA]
        body = markdown(r)
        assert "| ours, no draft (reference), eager | 10.0 | — | 100.0 | 100.0 | 100.0 | — | — | — | — | — |" in body
        assert "Goal" not in body and "for information" not in body


class TestPrompts:
    def test_chat_prompts_takes_chat_messages_only_per_slice_in_order(self) -> None:
        """The test slice holds raw pre-rendered prompts too (1 in 10); the agent only sends chat messages."""
        prompts = chat_prompts(["report", "test"], 12)
        assert [p.slice for p in prompts] == ["report"] * 12 + ["test"] * 12
        assert all(p.messages is not None for p in prompts)
        assert len({p.id for p in prompts}) == 24

    @needs_model
    def test_llama_cpp_gets_the_prompt_our_engine_renders(self) -> None:
        """The rendered text ends in the assistant turn, and llama.cpp's own tokenizer reads it as the same ids our
        worker feeds vLLM (the HF tokenizer, no special tokens added)."""
        from llama_cpp import Llama
        from transformers import AutoTokenizer

        from edge_agent.llm.prepare import find_gguf

        tokenizer = AutoTokenizer.from_pretrained(str(MODEL_DIR))
        llama = Llama(model_path=str(find_gguf()), vocab_only=True, verbose=False)
        for prompt in chat_prompts(["report", "test"], 2):
            assert prompt.messages is not None
            text = render_chat(tokenizer, prompt.messages)
            assert text.endswith("<|im_end|>\n<|im_start|>assistant\n")
            ours = tokenizer.encode(text, add_special_tokens=False)
            assert llama.tokenize(text.encode(), add_bos=False, special=True) == ours


@pytest.mark.engine
@pytest.mark.slow
def test_one_prompt_through_our_engine_and_llama_cpp(tmp_path: Path) -> None:
    """1 prompt × 4 tokens: both engines answer, figures are recorded, llama.cpp's count stays within max_tokens."""
    from bench.llamacpp import run
    from edge_agent.config import load_config

    base = load_config(ROOT / "configs" / "demo.toml")
    assert base.llm.speculative.draft is not None
    r = asyncio.run(run(base, chat_prompts(["report"], 1), 4, base.llm.speculative.draft, 4, engines=(NO_DRAFT, LLAMA)))
    ours, llama = r.engines[NO_DRAFT], r.engines[LLAMA]
    assert len(ours.token_ids) == 1 and 1 <= len(ours.token_ids[0]) <= 4
    assert 1 <= llama.tokens["report"] <= 4 and len(llama.texts) == 1
    assert ours.start_s > 0 and llama.start_s > 0 and ours.tokens_per_s() > 0 and llama.tokens_per_s() > 0
    assert ours.restart_s is not None and ours.restart_s > 0 and llama.restart_s is None
    assert r.settings["llama_cpp"]


def test_llama_cpp_alone_renders_without_ratios_or_identity() -> None:
    """A run of llama.cpp only (no reference, no draft engines) still writes its row."""
    r = results()
    r.engines = {LLAMA: r.engines[LLAMA]}
    body = markdown(r)
    assert "| llama.cpp 0.3.36, SmolLM2-135M-Instruct.Q4_1.gguf | 2.0 | — | 80.0 | 133.3 | 100.0 | 1.00× |" in body
    assert "Goal" not in body and "enforce_eager`:" not in body


def _parses_as_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


class TestCommandLine:
    @given(st.integers(-(10**6), 10**6))
    def test_counts_must_be_at_least_one(self, value: int) -> None:
        """Property: --prompts, --max-tokens and --k take exactly the integers ≥ 1."""
        if value >= 1:
            assert positive_int(str(value)) == value
        else:
            with pytest.raises(argparse.ArgumentTypeError, match=f"^{value} is not at least 1$"):
                positive_int(str(value))

    @given(st.text().filter(lambda t: not _parses_as_int(t)))
    def test_a_count_that_is_not_an_integer_is_refused(self, text: str) -> None:
        with pytest.raises(argparse.ArgumentTypeError, match="is not an integer"):
            positive_int(text)

    def test_zero_prompts_is_a_usage_error(self, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit) as exit_info:
            main(["--prompts", "0"])
        assert exit_info.value.code == 2
        assert "argument --prompts: 0 is not at least 1" in capsys.readouterr().err
