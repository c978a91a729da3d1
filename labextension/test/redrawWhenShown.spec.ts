import { IShowable, RedrawWhenShown } from '../src/widgets/redrawWhenShown';

interface ISectionView extends IShowable {
  isVisible: boolean;
  parent: { isVisible: boolean };
}

/** A view in a sidebar section: attached, its section collapsed or expanded. */
function sectionView(expanded: boolean): ISectionView {
  return { isAttached: true, isVisible: expanded, parent: { isVisible: expanded } };
}

describe('RedrawWhenShown', () => {
  it('a collapsed section receiving N updates draws 0 times, then once with the latest on expand', () => {
    const view = sectionView(false);
    const drawn: number[] = [];
    let latest = 0;
    const redraw = new RedrawWhenShown(view, () => drawn.push(latest));
    for (latest = 1; latest <= 500; latest++) {
      redraw.request();
    }
    latest = 500;
    expect(drawn).toEqual([]);
    expect(redraw.stale).toBe(true);
    view.parent.isVisible = view.isVisible = true; // expanded: Lumino then sends after-show
    redraw.shown();
    expect(drawn).toEqual([500]);
    expect(redraw.stale).toBe(false);
    redraw.shown(); // shown again with nothing new: no redraw
    expect(drawn).toEqual([500]);
  });

  it('an expanded section draws every update, as before', () => {
    const view = sectionView(true);
    const draw = jest.fn();
    const redraw = new RedrawWhenShown(view, draw);
    for (let i = 0; i < 5; i++) {
      redraw.request();
    }
    expect(draw).toHaveBeenCalledTimes(5);
    redraw.shown();
    expect(draw).toHaveBeenCalledTimes(5);
  });

  it('a view not yet in the page draws at once, and so does one that hid itself', () => {
    const detached: IShowable = { isAttached: false, isVisible: false, parent: null };
    const first = jest.fn();
    new RedrawWhenShown(detached, first).request();
    expect(first).toHaveBeenCalledTimes(1);
    // Hidden itself (nothing to show) in an expanded section: the change that shows it again is drawn.
    const selfHidden: IShowable = { isAttached: true, isVisible: false, parent: { isVisible: true } };
    const second = jest.fn();
    new RedrawWhenShown(selfHidden, second).request();
    expect(second).toHaveBeenCalledTimes(1);
  });
});
