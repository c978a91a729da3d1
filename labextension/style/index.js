import './base.css';
import './timetravel.css';
import './lineage.css';
import './agentdata.css';
