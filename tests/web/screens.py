"""What a reviewer checks on every screen, as page-side probes: text over text (a banner over the theme), text
cut off, a value shown unworded («null»), a control under 48 px, and the console's errors. Used by the round-two tests and the rehearsal."""

from __future__ import annotations

MIN_TAP_PX = 48

# Visible text boxes (one per element with text of its own, from its text nodes' own rectangles). Pairs of them
# that intersect are overlaps, unless one contains the other. ``overlays``: selectors of banners that may lie over
# other text (the hall's announcement over the players' cards) but never over ``protected`` text.
TEXT_PROBLEMS = r"""([overlays, protected]) => {
  const visible = (el) => el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
  const boxes = [];
  for (const el of document.querySelectorAll("body *")) {
    if (!visible(el)) continue;
    const own = [...el.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own.length) continue;
    // each line box of the text on its own: text that wraps round another inline element is not over it
    const rects = [];
    for (const node of own) {
      const range = document.createRange(); range.selectNodeContents(node);
      for (const r of range.getClientRects()) if (r.width >= 1 && r.height >= 1) rects.push(r);
    }
    if (rects.length) boxes.push({ el, rects, text: el.textContent.trim().slice(0, 40),
                                   own: own.map((n) => n.textContent).join(" ") });
  }
  const name = (b) => (b.el.id ? "#" + b.el.id : b.el.className || b.el.tagName) + " «" + b.text + "»";
  const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2;
  const hit = (a, b) => a.some((r) => b.some((q) => meet(r, q)));
  const inside = (el, sel) => sel.some((s) => el.closest(s));
  const out = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.el.contains(b.el) || b.el.contains(a.el) || !hit(a.rects, b.rects)) continue;
    const overlaid = inside(a.el, overlays) !== inside(b.el, overlays);
    const guarded = inside(a.el, protected) || inside(b.el, protected);
    if (overlaid && !guarded) continue;   // a banner over the cards: the banner says it; not over the theme/price
    out.push("overlap: " + name(a) + " / " + name(b));
  }
  for (const b of boxes) {
    // a value the page failed to word, shown as is
    if (/(^|[^\p{L}])(null|undefined|NaN|\[object Object\])([^\p{L}]|$)/u.test(b.own)) out.push("says: " + name(b) + " «" + b.own.trim().slice(0, 40) + "»");
    const el = b.el, style = getComputedStyle(el);
    const clips = style.overflowX !== "visible" || style.overflowY !== "visible" || style.webkitLineClamp !== "none";
    if (clips && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1) && el.clientWidth > 0)
      out.push("cut off: " + name(b) + " " + el.scrollWidth + "x" + el.scrollHeight + " in " + el.clientWidth + "x" + el.clientHeight);
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1)
    out.push("page " + document.documentElement.scrollWidth + " px wide in " + window.innerWidth);
  return out.slice(0, 20);
}"""

SMALL_CONTROLS = """(min) => [...document.querySelectorAll('button, a, select, input, summary, [role=button]')]
  .filter((node) => { const box = node.getBoundingClientRect();
    return node.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) && box.width > 0 && box.height > 0
      && !['checkbox', 'radio', 'hidden'].includes(node.type) && (box.width < min || box.height < min); })
  .map((node) => (node.id || node.className || node.tagName) + ' ' + Math.round(node.getBoundingClientRect().width)
    + 'x' + Math.round(node.getBoundingClientRect().height) + ' «' + (node.textContent || '').trim().slice(0, 30) + '»')"""

BOARD_OVERLAYS = [".board-announce", ".board-test", ".board-pin", ".toast", ".host-announce-bar", ".held"]
BOARD_PROTECTED = ["#board-theme", "#board-price", ".question-title"]


def text_problems(page, overlays=BOARD_OVERLAYS, protected=BOARD_PROTECTED) -> list[str]:
    """Text over text (outside the allowed overlays, never over the protected text), text cut off, page too wide."""
    return page.evaluate(TEXT_PROBLEMS, [overlays, protected])


def small_controls(page, min_px: int = MIN_TAP_PX) -> list[str]:
    return page.evaluate(SMALL_CONTROLS, min_px)


def disjoint(page, first: str, second: str) -> bool:
    """Whether the boxes of the visible elements ``first`` and ``second`` do not intersect."""
    a, b = page.locator(first).bounding_box(), page.locator(second).bounding_box()
    assert a and b, (first, second)
    return (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
            or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def console_errors(page, seen: list) -> list:
    """Console errors and script errors of ``page`` from now on, added to ``seen``."""
    page.on("console", lambda message: seen.append(f"{page.url}: {message.text}") if message.type == "error" else None)
    page.on("pageerror", lambda error: seen.append(f"{page.url}: page error: {error}"))
    return seen
