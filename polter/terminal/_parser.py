"""Splitting raw PTY bytes into printable text and complete control sequences, across reads.

`Tokenizer.split` returns a flat list ``[text, control, text, control, …]`` of even length (the
last control is `SENTINEL`, a NUL, when the text ran out) whose
text items hold no control characters and whose control items are each one complete sequence:
a C0/C1 character, ``"\\r\\n"``, a CSI sequence, an escape sequence or a whole string sequence
(OSC/DCS/APC/PM/SOS with its terminator). `_TOKEN` specifies the split (``_TOKEN.split``);
`split_complete` does the same in bulk, by string methods that scan in C: the regular expression engine
tests every character of the text against the pattern's first characters, a third of the engine's time
on plain lines. Only the end of a read needs care: an incomplete sequence there is carried over to the
next read, and an unterminated string is followed in a small state so that a multi-megabyte DCS is
never rescanned.

Whatever the chunking of the same bytes, the sequence of tokens handed on is the same: UTF-8 is
decoded incrementally (invalid bytes become U+FFFD), and over-long sequences are ignored by the
same rule whether they arrive whole or in pieces (see `MAX_SEQUENCE`).
"""

from __future__ import annotations

import codecs
import re

__all__ = ["MAX_SEQUENCE", "SENTINEL", "STRING_OPENERS", "Tokenizer", "sgr_and_text", "split_complete"]

#: A CSI body or string payload longer than this many characters is ignored (still consumed).
MAX_SEQUENCE = 4096

_TOKEN = re.compile(
    "("
    "\x1b(?:"
    r"\[[0-?]*[ -/]*[@-~]"  # CSI, complete
    r"|\[[0-?]*[ -/]*"  # CSI interrupted by a character that cannot continue it: dropped
    # Strings (ESC ] OSC, ESC P DCS, ESC _ APC, ESC ^ PM, ESC X SOS), ended by BEL or ST; an ESC that does not
    # begin ST ends one too (and starts the next sequence). One can reach the end of the text only when an ESC
    # held back for the next read ends it (an unterminated string at the end goes to the string state
    # instead), and an ESC last in the text is always followed by one held back, so it is not ST either.
    r"|[\]P_^X][^\x07\x1b\x18\x1a]*(?:[\x07\x18\x1a]|\x1b\\|(?=\x1b(?:[^\\]|\Z))|\Z)"
    r"|[ -/]*[0-~]"  # other escape sequences (ESC 7, ESC ( B, ESC # 8, …)
    r"|[ -/]*"  # ESC followed by something that is not a sequence: dropped
    ")"
    r"|\r\n"
    r"|[\x00-\x1a\x1c-\x1f\x7f-\x9f]"  # C0, DEL, C1
    ")"
)
#: Ends every split list, so that it pairs up; NUL is a control that does nothing.
SENTINEL = "\x00"
#: What follows the ESC of a string sequence (OSC, DCS, APC, PM, SOS): the only sequences that may hold a line feed.
STRING_OPENERS = ("]", "P", "_", "^", "X")
_STRING_OPEN = re.compile(r"\x1b[\]P_^X][^\x07\x1b\x18\x1a]*")
_CSI_OPEN = re.compile(r"\x1b\[[0-?]*[ -/]*")
_ESC_OPEN = re.compile(r"\x1b[ -/]*")
_STRING_END = re.compile(r"[\x07\x18\x1a\x1b]")
# After an over-long unfinished sequence: what of the next read still belongs to it.
_SKIP_CSI_PARAMS = re.compile(r"[0-?]*[ -/]*([@-~])?")
_SKIP_CSI_INTERMEDIATES = re.compile(r"[ -/]*([@-~])?")
_SKIP_ESC = re.compile(r"[ -/]*([0-~])?")


# The split without scanning every character in Python or in the regex engine: the text is cut at its
# ESCs (`str.split`), each piece is one escape sequence and the text after it, and that text is checked
# for controls in one call (`str.isprintable`, false for every C0 and C1 control and DEL).
_C0_CONTROL = re.compile(r"(\r\n|[\x00-\x1a\x1c-\x1f\x7f-\x9f])")
_AFTER_ESC = re.compile(
    r"\[[0-?]*[ -/]*[@-~]?"  # CSI, complete or interrupted
    r"|[\]P_^X][^\x07\x18\x1a]*[\x07\x18\x1a]?"  # a string, to its BEL, CAN or SUB, else to the next ESC
    r"|[ -/]*[0-~]?"  # another escape sequence, or an ESC that begins none
)
_SGR_BODY = re.compile(r"\[[0-?]*[ -/]*m")
_MAX_CACHED = 4096
_sgr_tokens: dict[str, str] = {}
"""An SGR's text after its ESC → the whole sequence, one string for every time it comes: the feed loop's
lookups by sequence then hash it once."""
_SHORT = 24
_short_segments: dict[str, tuple[str, str]] = {}
"""A short piece that is an SGR and printable text → the two (`sgr_and_text`)."""
_CRLF = "\r\n"


def split_complete(text: str) -> list[str]:
    """``[text, control, …, text]`` (odd length) for text with no unfinished sequence at its end: what
    ``_TOKEN.split(text)`` returns (the tests compare the two), built in bulk."""
    segments = text.split("\x1b")
    parts: list[str] = []
    _split_plain(segments[0], parts)
    count = len(segments)
    index = 1
    while index < count:
        segment = segments[index]
        index += 1
        known = sgr_and_text(segment)
        if known is None:
            match = _AFTER_ESC.match(segment)
            assert match is not None  # the last alternative matches the empty string
            end = match.end()
            if (
                segment.startswith(STRING_OPENERS)
                and end == len(segment)
                and not segment.endswith(("\x07", "\x18", "\x1a"))
            ):
                # A string that runs to the next ESC: ST (ESC \\) ends it; any other ESC ends it and begins
                # the next sequence. The text ends with neither a string nor an ESC (see `_hold_tail`).
                if index < count and segments[index].startswith("\\"):
                    parts.append("\x1b" + segment + "\x1b\\")
                    _split_plain(segments[index][1:], parts)
                    index += 1
                else:
                    parts.append("\x1b" + segment)
                    parts.append("")
                continue
            parts.append("\x1b" + segment[:end])  # not an SGR (`sgr_at` would have found it)
            _split_plain(segment[end:], parts)
            continue
        parts.append(known[0])
        _split_plain(known[1], parts)
    return parts


def sgr_and_text(segment: str) -> tuple[str, str] | None:
    """The SGR sequence that ``segment`` (text that followed an ESC) begins with and the text after it, or None
    when it begins anything else. A short one whose text is printable is remembered: colourful output repeats
    them (a coloured word, ``[0m`` and a space)."""
    short = len(segment) <= _SHORT
    if short:
        known = _short_segments.get(segment)
        if known is not None:
            return known
    token = sgr_at(segment)
    if token is None:
        return None
    known = (token, segment[len(token) - 1 :])
    if short and known[1].isprintable():
        if len(_short_segments) >= _MAX_CACHED:
            _short_segments.clear()
        _short_segments[segment] = known
    return known


def sgr_at(segment: str) -> str | None:
    """The SGR sequence (with its ESC) that ``segment``, text that followed an ESC, begins with, as
    `split_complete` would cut it; None when it begins anything else."""
    if not segment.startswith("["):
        return None
    end = segment.find("m") + 1  # a CSI's parameters and intermediates hold no "m": the first is its end
    if not end:
        return None
    body = segment[:end]
    token = _sgr_tokens.get(body)
    if token is None:
        if _SGR_BODY.fullmatch(body) is None:
            return None
        if len(_sgr_tokens) >= _MAX_CACHED:
            _sgr_tokens.clear()
        token = _sgr_tokens[body] = "\x1b" + body
    return token


def _split_plain(text: str, parts: list[str]) -> None:
    """Append ``text`` (no ESC in it) to ``parts`` as ``text, control, …, text``."""
    if text.isprintable():
        parts.append(text)
        return
    lines = text.split(_CRLF)
    if len(lines) > 1 and "".join(lines).isprintable():
        # Lines and nothing else (``cat``, ``seq``, a build log): interleaved with their CR LFs in one step.
        run = [_CRLF] * (2 * len(lines) - 1)
        run[::2] = lines
        parts += run
        return
    parts += _C0_CONTROL.split(text)


class Tokenizer:
    """Bytes in, ``[text, control, …]`` out; holds what a read left unfinished."""

    def __init__(self, max_sequence: int = MAX_SEQUENCE) -> None:
        self.max_sequence = max_sequence
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._carry = ""  # an unfinished CSI or escape sequence (short)
        self._skip: re.Pattern[str] | None = None  # inside an over-long, unfinished CSI/escape
        self._string_kind = ""  # inside an unterminated string of this kind
        self._string_payload: list[str] = []
        self._string_length = 0
        self._string_esc = False  # …whose last character so far was ESC

    def split(self, data: bytes) -> list[str]:
        """Decode ``data`` and split it; see the module docstring."""
        return self.split_text(self._decode(data))

    def split_text(self, text: str) -> list[str]:
        head, text = self.complete(text)
        if not text:
            return head
        parts = split_complete(text)
        parts.append(SENTINEL)
        if head:
            return head + parts
        return parts

    def take(self, data: bytes) -> tuple[list[str], str]:
        """Decode ``data``; see `complete`."""
        return self.complete(self._decode(data))

    def complete(self, text: str) -> tuple[list[str], str]:
        """``text`` after what ends a sequence an earlier read began: that sequence as ``["", token]`` (or
        ``[]``), and the rest with no unfinished sequence at its end (kept for the next read), for
        `split_complete`."""
        head: list[str] = []
        if self._skip is not None:
            text = self._continue_skip(self._skip, text)
        if self._string_kind and text:
            token, text = self._continue_string(text)
            if token is None:
                return head, ""
            head = ["", token]
        if self._carry:
            text = self._carry + text
            self._carry = ""
        if not text:
            return head, ""
        last_esc = text.rfind("\x1b")
        if last_esc >= 0:
            text = self._hold_tail(text, last_esc)
        return head, text

    # -- the end of a read -------------------------------------------------------------------
    def _hold_tail(self, text: str, last_esc: int) -> str:
        """Keep an unfinished sequence at the end of ``text`` for the next read; return the rest."""
        if last_esc == len(text) - 1:
            opener = text.rfind("\x1b", 0, last_esc)
            if opener >= 0 and _STRING_OPEN.fullmatch(text, opener, last_esc):
                self._begin_string(text[opener + 1], text[opener + 2 : last_esc])
                self._string_esc = True
                return text[:opener]
            self._carry = "\x1b"
            return text[:last_esc]
        tail = text[last_esc:]
        if _STRING_OPEN.fullmatch(tail):
            self._begin_string(tail[1], tail[2:])
            return text[:last_esc]
        if _CSI_OPEN.fullmatch(tail):
            if len(tail) - 2 > self.max_sequence:
                has_intermediate = any(" " <= ch <= "/" for ch in tail[2:])
                self._skip = _SKIP_CSI_INTERMEDIATES if has_intermediate else _SKIP_CSI_PARAMS
            else:
                self._carry = tail
            return text[:last_esc]
        if _ESC_OPEN.fullmatch(tail):
            if len(tail) - 1 > self.max_sequence:
                self._skip = _SKIP_ESC
            else:
                self._carry = tail
            return text[:last_esc]
        return text

    def _continue_skip(self, skip: re.Pattern[str], text: str) -> str:
        match = skip.match(text)
        assert match is not None  # every _SKIP_ pattern matches the empty string
        end = match.end()
        if end == len(text) and match.group(1) is None:
            if end and skip is _SKIP_CSI_PARAMS and any(" " <= ch <= "/" for ch in text):
                self._skip = _SKIP_CSI_INTERMEDIATES
            return ""  # still inside
        self._skip = None
        return text[end:]

    # -- strings (OSC, DCS, APC, PM, SOS) spanning reads ------------------------------------
    def _begin_string(self, kind: str, payload: str) -> None:
        self._string_kind = kind
        self._string_payload = []
        self._string_length = 0
        self._string_esc = False
        self._append_payload(payload)

    def _append_payload(self, payload: str) -> None:
        # Keep one character more than the limit: the handler then sees that it was too long.
        room = self.max_sequence + 1 - self._string_length
        if room > 0 and payload:
            payload = payload[:room]
            self._string_payload.append(payload)
            self._string_length += len(payload)

    def _continue_string(self, text: str) -> tuple[str | None, str]:
        """Look for the end of the open string: (the whole string token or None, the rest)."""
        if self._string_esc:
            self._string_esc = False
            if text[0] == "\\":
                return self._end_string("\x1b\\"), text[1:]
            return self._end_string(""), "\x1b" + text  # that ESC starts the next sequence
        match = _STRING_END.search(text)
        if match is None:
            self._append_payload(text)
            return None, ""
        at = match.start()
        self._append_payload(text[:at])
        end = text[at]
        if end != "\x1b":
            return self._end_string(end), text[at + 1 :]
        if at + 1 == len(text):
            self._string_esc = True
            return None, ""
        if text[at + 1] == "\\":
            return self._end_string("\x1b\\"), text[at + 2 :]
        return self._end_string(""), text[at:]

    def _end_string(self, terminator: str) -> str:
        token = "\x1b" + self._string_kind + "".join(self._string_payload) + terminator
        self._string_kind = ""
        self._string_payload = []
        self._string_length = 0
        return token
