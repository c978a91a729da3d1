"""The sidebar's stylesheets reach JupyterLab: it loads style/index.js (package.json's
``styleModule``), so each sheet index.css lists must be imported there, and each sheet
in the folder must be listed."""
import re
from pathlib import Path

STYLE = Path(__file__).resolve().parents[2] / "labextension" / "style"


def test_every_stylesheet_is_loaded_by_the_style_module():
    sheets = {path.name for path in STYLE.glob("*.css")} - {"index.css"}
    listed = set(re.findall(r"@import url\('([^']+)'\)", (STYLE / "index.css").read_text()))
    imported = set(re.findall(r"import '\./([^']+)'", (STYLE / "index.js").read_text()))
    assert listed == sheets
    assert imported == sheets
