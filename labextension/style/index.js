// JupyterLab loads this module (package.json "styleModule"), not index.css: every
// stylesheet of index.css must be imported here too (tests/unit/test_styles.py).
import './base.css';
import './timetravel.css';
import './skew.css';
import './lineage.css';
import './versions.css';
import './control.css';
import './agentdata.css';
import './alerts.css';
