import { LabIcon } from '@jupyterlab/ui-components';

/** A cup with an ice cube: the IcedTea sidebar tab. */
const svgstr = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M4 5h14l-1.6 14.2A2 2 0 0 1 14.4 21H7.6a2 2 0 0 1-2-1.8L4 5zm2.2 2l1.3 12h6.9l1.4-12H6.2z"/>
    <path d="M18.3 8.5h1.2a2.5 2.5 0 0 1 0 5h-1.8l.2-2h1.6a.5.5 0 0 0 0-1h-1.4l.2-2z"/>
    <rect x="8" y="9" width="4" height="4" rx="0.6" transform="rotate(-12 10 11)"/>
    <path d="M12 2.5l1.2-.5 1.6 4.2-1.2.5z"/>
  </g>
</svg>`;

export const icedteaIcon = new LabIcon({ name: 'icedtea-jupyter:icon', svgstr });
