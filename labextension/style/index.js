import './base.css';
import './timetravel.css';
import './lineage.css';
