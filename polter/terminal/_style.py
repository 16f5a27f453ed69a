"""Cell styles and SGR (Select Graphic Rendition): parsing, interning and a transition cache.

A style is an immutable, hashable `Style` tuple. Styles are interned so that equal styles are
usually the same object: rows store references, renderers can cache per style, and the SGR
transition cache maps ``(current style, SGR sequence)`` to the next style with one dict lookup.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "DEFAULT_STYLE",
    "Style",
    "apply_sgr",
    "blank_style",
    "intern",
    "sgr_transition",
    "style_transitions",
]


class Style(NamedTuple):
    """How one cell is drawn. Colours use Rich's syntax; ``None`` is the terminal's default colour.

    Colours: ``"red"`` … ``"white"``, ``"bright_red"`` … ``"bright_white"``, ``"color(n)"`` for
    the 256-colour palette (n ≥ 16) and ``"#rrggbb"`` for 24-bit colour. ``reverse`` is a flag:
    the renderer swaps foreground and background itself (default colours included).
    """

    fg: str | None = None
    bg: str | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    blink: bool = False
    reverse: bool = False
    strike: bool = False
    conceal: bool = False


DEFAULT_STYLE = Style()

_NAMES = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")
#: The 256-colour palette index → Rich colour (0–15 by name so ``31`` and ``38;5;1`` are equal).
PALETTE: tuple[str, ...] = (
    _NAMES + tuple(f"bright_{name}" for name in _NAMES) + tuple(f"color({n})" for n in range(16, 256))
)

# Interning is bounded: a truecolour gradient can produce any number of styles. When the table is
# full it starts again; cells keep their (equal, no longer identical) styles, so nothing breaks.
_MAX_INTERNED = 16_384
_interned: dict[Style, Style] = {DEFAULT_STYLE: DEFAULT_STYLE}
# (id(style), "\x1b[...m") → next style. Keyed by id() because hashing a 10-field tuple costs
# more than the lookup; ids stay valid because interned styles are alive while cached here.
_transitions: dict[tuple[int, str], Style] = {}
# "\x1b[0;...m" → style: sequences that start with a reset do not depend on the current style
# (after a one-off truecolour style, its "\x1b[0m" is still a cache hit).
_absolute: dict[str, Style] = {}
_seen: set[str] = set()  # SGR sequences met once (strings: no GC cost)
_blanks: dict[Style, Style] = {}


def intern(style: Style) -> Style:
    """The canonical object equal to ``style``."""
    found = _interned.get(style)
    if found is not None:
        return found
    if len(_interned) >= _MAX_INTERNED:
        _interned.clear()
        _transitions.clear()
        _absolute.clear()
        _blanks.clear()
        _interned[DEFAULT_STYLE] = DEFAULT_STYLE
        _interned[style] = style
        return style
    _interned[style] = style
    return style


def blank_style(style: Style) -> Style:
    """The style of cells erased while ``style`` is current: only its background survives (BCE)."""
    found = _blanks.get(style)
    if found is None:
        found = _blanks[style] = intern(Style(bg=style.bg)) if style.bg is not None else DEFAULT_STYLE
    return found


def style_transitions() -> dict[tuple[int, str], Style]:
    """The transition cache itself, for the feed loop's inlined lookup (``(id(style), sequence)``)."""
    return _transitions


def sgr_transition(style: Style, sequence: str) -> Style:
    """The style after the complete SGR escape ``sequence`` (``"\x1b[...m"``), cached.

    A sequence seen for the first time is applied but neither cached nor interned: a stream of
    one-off truecolour sequences would otherwise fill the caches with entries that never hit
    (and feed the GC). From the second sighting on, the result is interned and cached.
    """
    key = (id(style), sequence)
    found = _transitions.get(key)
    if found is not None:
        return found
    params = sequence[2:-1]
    if params in ("", "0") or params.startswith(("0;", ";")):
        found = _absolute.get(sequence)
        if found is None:
            if len(_absolute) >= _MAX_INTERNED:
                _absolute.clear()
            found = _absolute[sequence] = intern(apply_sgr(DEFAULT_STYLE, params))
    elif sequence not in _seen:
        if len(_seen) >= 4 * _MAX_INTERNED:
            _seen.clear()
        _seen.add(sequence)
        return apply_sgr(style, params)
    else:
        found = intern(apply_sgr(style, params))
    # Only an interned `style` is kept alive, so only then can its id not be reused.
    if _interned.get(style) is style:
        if len(_transitions) >= 4 * _MAX_INTERNED:
            _transitions.clear()
        _transitions[key] = found
    return found


def _colour(parts: list[str], i: int) -> tuple[str | None, int]:
    """An extended colour in ``;`` form starting at ``parts[i]`` (the 5 or 2): (colour, next index)."""
    kind = parts[i] if i < len(parts) else ""
    if kind == "5":
        if i + 1 < len(parts):
            return _indexed(parts[i + 1]), i + 2
        return None, i + 1
    if kind == "2":
        if i + 3 < len(parts):
            return _rgb(parts[i + 1], parts[i + 2], parts[i + 3]), i + 4
        return None, len(parts)
    return None, i + 1


def _colon_colour(sub: list[str]) -> str | None:
    """An extended colour in ``:`` form: ``sub`` is ``["38", "2", "", r, g, b]`` or ``["38", "5", n]``."""
    if len(sub) < 2:
        return None
    if sub[1] == "5" and len(sub) >= 3:
        return _indexed(sub[2])
    if sub[1] == "2":
        if len(sub) >= 6:  # 38:2:<colour space>:r:g:b
            return _rgb(sub[3], sub[4], sub[5])
        if len(sub) == 5:  # 38:2:r:g:b (common, though not ITU T.416)
            return _rgb(sub[2], sub[3], sub[4])
    return None


def _indexed(text: str) -> str | None:
    if text.isdigit():
        n = int(text)
        if n < 256:
            return PALETTE[n]
    return None


_HEX = {str(n): f"{n:02x}" for n in range(256)}  # "200" → "c8": no int() on the hot path


def _rgb(r: str, g: str, b: str) -> str | None:
    try:
        return f"#{_HEX[r]}{_HEX[g]}{_HEX[b]}"
    except KeyError:  # "", "007", "300" or a parameter such as "1?"
        pass
    try:
        red, green, blue = int(r or 0), int(g or 0), int(b or 0)
    except ValueError:  # parameters hold only 0-9 : ; < = > ?
        return None
    return f"#{min(red, 255):02x}{min(green, 255):02x}{min(blue, 255):02x}"


# What each simple SGR code does: (field index in Style, value) pairs, keyed by the code's text
# so that a parameter is looked up without int(). "0"/"" (reset) and 38/48/58 are handled apart.
_FG, _BG, _BOLD, _DIM, _ITALIC, _UNDERLINE, _BLINK, _REVERSE, _STRIKE, _CONCEAL = range(10)
_SIMPLE: dict[str, tuple[tuple[int, object], ...]] = {
    "1": ((_BOLD, True),), "2": ((_DIM, True),), "3": ((_ITALIC, True),), "4": ((_UNDERLINE, True),),
    "5": ((_BLINK, True),), "6": ((_BLINK, True),), "7": ((_REVERSE, True),), "8": ((_CONCEAL, True),),
    "9": ((_STRIKE, True),), "21": ((_UNDERLINE, True),), "22": ((_BOLD, False), (_DIM, False)),
    "23": ((_ITALIC, False),), "24": ((_UNDERLINE, False),), "25": ((_BLINK, False),),
    "27": ((_REVERSE, False),), "28": ((_CONCEAL, False),), "29": ((_STRIKE, False),),
    "39": ((_FG, None),), "49": ((_BG, None),),
    **{str(30 + n): ((_FG, PALETTE[n]),) for n in range(8)},
    **{str(40 + n): ((_BG, PALETTE[n]),) for n in range(8)},
    **{str(90 + n): ((_FG, PALETTE[8 + n]),) for n in range(8)},
    **{str(100 + n): ((_BG, PALETTE[8 + n]),) for n in range(8)},
}  # fmt: skip
_SIMPLE.update({"0" + code: action for code, action in _SIMPLE.items() if len(code) == 1})  # "01"
_new_style = tuple.__new__


def apply_sgr(style: Style, params: str) -> Style:
    """Apply SGR parameters (the text between ``CSI`` and ``m``) to ``style``; unknown codes are
    ignored. The result is not interned (see `sgr_transition`)."""
    if params and params[0] in "<=>?":
        return style  # CSI > 4;2 m is modifyOtherKeys (xterm), not a style.
    values: list[object] = list(style)
    parts = params.split(";")
    count = len(parts)
    i = 0
    while i < count:
        part = parts[i]
        i += 1
        action = _SIMPLE.get(part)
        if action is not None:
            for index, value in action:
                values[index] = value
        elif part in ("", "0", "00"):
            values = list(DEFAULT_STYLE)
        elif part in ("38", "48"):
            if i + 3 < count and parts[i] == "2":  # the commonest: 38;2;r;g;b
                colour = _rgb(parts[i + 1], parts[i + 2], parts[i + 3])
                i += 4
            else:
                colour, i = _colour(parts, i)
            if colour is not None:
                values[_FG if part == "38" else _BG] = colour
        elif part == "58":
            _, i = _colour(parts, i)  # underline colour: consumed, not drawn
        elif ":" in part:
            sub = part.split(":")
            head = sub[0]
            if head in ("38", "48"):
                colour = _colon_colour(sub)
                if colour is not None:
                    values[_FG if head == "38" else _BG] = colour
            elif head == "4":
                values[_UNDERLINE] = sub[1] not in ("0", "") if len(sub) > 1 else True
            # 58:… (underline colour) and anything else: ignored
    new = _new_style(Style, values)
    return style if new == style else new  # callers intern what they keep
