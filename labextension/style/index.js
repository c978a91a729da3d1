import './base.css';
import './timetravel.css';
