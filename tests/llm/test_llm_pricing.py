"""Pricing out of litellm's hot path: answers are priced once from their token counts (Pricer, unit prices looked
up once per client), litellm's own per-call pricing is skipped for sciprobe's calls only, and long-context
tiers still get litellm's exact price."""

from __future__ import annotations

import asyncio

import pytest

from sciprobe.llm.backends import OWN_PRICING, Pricer, import_litellm, unit_prices
from sciprobe.llm.client import LLMClient
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Request
from sciprobe.llm.usage import UsageReport


def test_flat_price_is_unit_price_times_tokens():
    litellm = import_litellm()
    pricer = Pricer("openai/gpt-4o-mini")
    prompt, completion = litellm.cost_per_token(model="openai/gpt-4o-mini", prompt_tokens=1234, completion_tokens=56)
    assert pricer.cost(UsageReport(1234, 56)) == pytest.approx(prompt + completion, rel=1e-12)


def test_above_a_long_context_tier_the_call_gets_litellms_exact_price():
    litellm = import_litellm()
    model = "gemini/gemini-2.5-pro"  # input price doubles above 200k prompt tokens in litellm's table
    pricer = Pricer(model)
    assert pricer.flat_up_to is not None and pricer.flat_up_to <= 200_000  # its smallest tier (128k here)
    for prompt_tokens in (100_000, 300_000):
        exact = sum(litellm.cost_per_token(model=model, prompt_tokens=prompt_tokens, completion_tokens=10))
        assert pricer.cost(UsageReport(prompt_tokens, 10)) == pytest.approx(exact, rel=1e-12)
    flat = 300_000 * unit_prices(model)[0] + 10 * unit_prices(model)[1]
    assert pricer.cost(UsageReport(300_000, 10)) > flat  # the tier, not the flat price


def test_unknown_price_or_unusable_usage_is_unknown_never_zero():
    assert Pricer("openai/not-in-any-price-table").cost(UsageReport(10, 5)) is None
    assert Pricer("openai/gpt-4o-mini").cost(UsageReport(problem="usage not reported")) is None


def test_litellm_skips_its_own_pricing_only_for_calls_sciprobe_prices():
    litellm = import_litellm()
    messages = [{"role": "user", "content": "price me"}]

    async def call(url: str, **extra):
        return await litellm.acompletion(model="openai/gpt-4o-mini", api_base=url, api_key="k", messages=messages,
                                          caching=False, **extra)

    with StubServer() as stub:
        theirs = asyncio.run(call(stub.base_url))
        ours = asyncio.run(call(stub.base_url, metadata={OWN_PRICING: True}))
        [completion] = LLMClient(f"openai/gpt-4o-mini,base_url={stub.base_url},api_key=k,transport=litellm") \
            .complete_many([Request.of(messages)])
    assert theirs._hidden_params["response_cost"] > 0  # anyone else's litellm call is priced as before
    assert ours._hidden_params["response_cost"] is None  # ours: skipped inside litellm...
    assert completion.cost_usd == pytest.approx(theirs._hidden_params["response_cost"], rel=1e-9)  # ...priced here
