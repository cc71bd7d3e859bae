"""`mine --template-config` takes a knobs file or, as the README writes it, the JSON object
itself (the inline form was refused as a missing file); a missing file or broken JSON is one
line naming the flag."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.sidecar.cli.main import cli


def _mine(tmp_path, value):
    corpus = tmp_path / "web.jsonl"
    write_jsonl(generate_web(60, 2), corpus)
    return CliRunner().invoke(cli, ["mine", "--jsonl", str(corpus), "--field", "text", "--id-field", "id",
                                    "--out", str(tmp_path / "out"), "--site-field", "site", "--url-field", "url",
                                    "--template-config", value, "--progress", "none", "--sigma", "5"])


def test_the_json_object_itself_is_the_config(tmp_path):
    res = _mine(tmp_path, '{"exact_phrases_on_sites": true, "skeleton": {"site_echo_length": 6}}')
    assert res.exit_code == 0, res.output
    config = json.loads((tmp_path / "out" / "templates.jsonl").read_text().splitlines()[0])["template_config"]
    assert config["exact_phrases_on_sites"] is True and config["skeleton"]["site_echo_length"] == 6


def test_broken_inline_json_and_a_missing_file_are_one_line(tmp_path):
    res = _mine(tmp_path, '{"exact_phrases_on_sites": tru')
    assert res.exit_code == 2 and "Error: Invalid value for --template-config: not a JSON object" in res.output
    res = _mine(tmp_path, str(tmp_path / "knobs.json"))
    assert res.exit_code == 2
    assert f"--template-config: {tmp_path / 'knobs.json'}: no such file; give a knobs file or the JSON" in res.output
    assert not (tmp_path / "out").exists()
