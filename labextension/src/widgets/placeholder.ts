import { Widget } from '@lumino/widgets';

import { el } from './format';

/**
 * A place kept for a view whose capability has not landed yet (the skew chart, the
 * lineage traces): what will fill it. Its section gives the title.
 */
export class Placeholder extends Widget {
  constructor(options: { id: string; text: string }) {
    super();
    this.addClass('jp-icedtea-Placeholder');
    this.node.dataset.placeholder = options.id;
    this.node.append(el('div', 'jp-icedtea-placeholder', options.text));
  }
}
