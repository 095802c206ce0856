"""`sciprobe leaderboard` shows local runs: results files from `sciprobe evaluate` import into the store."""

import json

from sciprobe.cli import main
from sciprobe.leaderboard.importer import import_results_dir
from sciprobe.leaderboard.store import SQLiteStore
from sciprobe.llm.stub_server import StubServer


def test_evaluate_results_import_with_scores_and_provenance(tmp_path):
    def reply(body):
        text = body["messages"][-1]["content"]
        if "Your choice:" in text:
            return "Your choice: Paper 2\nConfidence score: 55"
        return 'Your verdict: No\nConfidence score: 60\nSubject: ["Physics"]'

    with StubServer(reply=reply) as server:
        model = f"openai/gpt-4o-mini,base_url={server.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "idrbench:i2r", "--model", model,
                     "--output-dir", str(tmp_path / "runs")]) == 0
    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, tmp_path / "runs") == 2
    results = {r.task: r for r in store.list_results("idrbench")}
    assert set(results) == {"idrbench:ipi", "idrbench:i2r"}
    i2r = results["idrbench:i2r"]
    assert set(i2r.scores) == {"official", "corrected"}  # the two tournaments merge into one task result
    assert i2r.model_cutoff == "2023-10-31" and i2r.model_family == "openai"
    written = json.loads(next((tmp_path / "runs" / "results").rglob("*.json")).read_text())
    assert results["idrbench:ipi"].scores["official"]["macro_f1"] == \
        written["sciprobe"]["tasks"]["idrbench:ipi|0"]["scores"]["official"]["macro_f1"]
    assert len(results["idrbench:ipi"].dataset_fingerprint) == 64
    # Importing again replaces, never duplicates.
    import_results_dir(store, tmp_path / "runs")
    assert len(store.list_results("idrbench")) == 2
