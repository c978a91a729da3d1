/** How each kind of interaction trigger is drawn: the same shape and colour everywhere. */

export type MarkerShape = 'square' | 'circle' | 'bar' | 'triangle' | 'diamond';

export interface ITriggerStyle {
  shape: MarkerShape;
  /** A CSS colour variable of the JupyterLab theme, with a fallback. */
  color: string;
  /** What the legend and tooltips say. */
  label: string;
}

export const TRIGGER_STYLES: { [trigger: string]: ITriggerStyle } = {
  initial: { shape: 'square', color: 'var(--jp-ui-font-color2, #616161)', label: 'initial states (I0)' },
  manual: { shape: 'circle', color: 'var(--jp-brand-color1, #1976d2)', label: 'manual (Interact now, run.interact())' },
  periodic: { shape: 'bar', color: 'var(--jp-success-color1, #388e3c)', label: 'periodic (--interact-every)' },
  condition: { shape: 'triangle', color: 'var(--jp-warn-color1, #f57c00)', label: 'condition (--interact-when)' },
  pinned: { shape: 'diamond', color: 'var(--jp-accent-color1, #7b1fa2)', label: "pinned at θ's counts (--interact-at)" }
};

const OTHER: ITriggerStyle = { shape: 'diamond', color: 'var(--jp-ui-font-color1, #212121)', label: 'other' };

export function triggerStyle(trigger: string): ITriggerStyle {
  return TRIGGER_STYLES[trigger] ?? OTHER;
}

/** An inline SVG glyph of a trigger's marker (list rows, legend). */
export function triggerGlyph(trigger: string, hollow = false): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const style = triggerStyle(trigger);
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('width', '10');
  svg.setAttribute('height', '10');
  svg.setAttribute('viewBox', '0 0 10 10');
  svg.classList.add('jp-icedtea-glyph');
  const shape = document.createElementNS(
    ns,
    style.shape === 'circle' ? 'circle' : style.shape === 'square' || style.shape === 'bar' ? 'rect' : 'polygon'
  );
  switch (style.shape) {
    case 'circle':
      shape.setAttribute('cx', '5');
      shape.setAttribute('cy', '5');
      shape.setAttribute('r', '4');
      break;
    case 'square':
      setAll(shape, { x: '1.5', y: '1.5', width: '7', height: '7' });
      break;
    case 'bar':
      setAll(shape, { x: '3.5', y: '0.5', width: '3', height: '9' });
      break;
    case 'triangle':
      shape.setAttribute('points', '5,0.5 9.5,9 0.5,9');
      break;
    default:
      shape.setAttribute('points', '5,0.5 9.5,5 5,9.5 0.5,5');
  }
  shape.setAttribute('style', hollow ? `fill:none;stroke:${style.color};stroke-width:1.5` : `fill:${style.color}`);
  svg.append(shape);
  return svg;
}

function setAll(node: Element, attributes: { [name: string]: string }): void {
  for (const [k, v] of Object.entries(attributes)) {
    node.setAttribute(k, v);
  }
}

/** Resolve `var(--x, fallback)` against an element's computed style (canvas needs real colours). */
export function resolveColor(color: string, node: Element): string {
  const match = /^var\((--[\w-]+)(?:,\s*(.+))?\)$/.exec(color);
  if (!match) {
    return color;
  }
  const value = getComputedStyle(node).getPropertyValue(match[1]).trim();
  return value || match[2] || '#888';
}
