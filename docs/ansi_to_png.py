#!/usr/bin/env python3
"""Renders a terminal capture with colours (`tmux capture-pane -e -p`) to a
PNG, cell by cell, in DejaVu Sans Mono (Debian: fonts-dejavu-core; needs
Pillow). Used for the screenshots in README.

    tmux capture-pane -e -p -t SESSION > screen.ans
    python3 docs/ansi_to_png.py screen.ans docs/tui.png
"""
import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = "/usr/share/fonts/truetype/dejavu/"
SIZE = 15
# A dark palette for the 16 ANSI colours (black … bright white).
PALETTE = [
    (30, 30, 36), (224, 108, 117), (152, 195, 121), (229, 192, 123),
    (97, 175, 239), (198, 120, 221), (86, 182, 194), (200, 204, 212),
    (92, 99, 112), (240, 128, 137), (172, 215, 141), (239, 212, 143),
    (117, 195, 255), (218, 140, 241), (106, 202, 214), (240, 242, 246),
]
FG = (200, 204, 212)
BG = (24, 26, 31)


def xterm256(n):
    if n < 16:
        return PALETTE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    g = 8 + (n - 232) * 10
    return (g, g, g)


class Pen:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg, self.bg = None, None
        self.bold = self.dim = self.italic = self.reverse = False

    def sgr(self, params):
        codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                self.reset()
            elif c == 1:
                self.bold = True
            elif c == 2:
                self.dim = True
            elif c == 3:
                self.italic = True
            elif c == 7:
                self.reverse = True
            elif c == 22:
                self.bold = self.dim = False
            elif c == 23:
                self.italic = False
            elif c == 27:
                self.reverse = False
            elif 30 <= c <= 37:
                self.fg = PALETTE[c - 30]
            elif 90 <= c <= 97:
                self.fg = PALETTE[c - 90 + 8]
            elif 40 <= c <= 47:
                self.bg = PALETTE[c - 40]
            elif 100 <= c <= 107:
                self.bg = PALETTE[c - 100 + 8]
            elif c == 39:
                self.fg = None
            elif c == 49:
                self.bg = None
            elif c in (38, 48) and i + 1 < len(codes):
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    colour = xterm256(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    colour = tuple(codes[i + 2:i + 5])
                    i += 4
                else:
                    colour = None
                if c == 38:
                    self.fg = colour
                else:
                    self.bg = colour
                i += 1
            i += 1

    def colours(self):
        fg, bg = self.fg or FG, self.bg or BG
        if self.reverse:
            fg, bg = bg, fg
        if self.dim:
            fg = tuple((a + b) // 2 for a, b in zip(fg, bg))
        return fg, bg


def main(src, dst):
    fonts = {
        (False, False): ImageFont.truetype(FONT_DIR + "DejaVuSansMono.ttf", SIZE),
        (True, False): ImageFont.truetype(FONT_DIR + "DejaVuSansMono-Bold.ttf", SIZE),
        (False, True): ImageFont.truetype(FONT_DIR + "DejaVuSansMono-Oblique.ttf", SIZE),
        (True, True): ImageFont.truetype(FONT_DIR + "DejaVuSansMono-BoldOblique.ttf", SIZE),
    }
    left, top, right, bottom = fonts[(False, False)].getbbox("█")
    cw, ch = fonts[(False, False)].getbbox("M")[2], bottom + 3
    lines = open(src, encoding="utf-8").read().rstrip("\n").split("\n")
    cols = 0
    rows = []
    token = re.compile(r"\x1b\[([0-9;]*)m|(.)", re.S)
    pen = Pen()
    for line in lines:
        cells = []
        for m in token.finditer(line):
            if m.group(2) is None:
                pen.sgr(m.group(1))
            else:
                fg, bg = pen.colours()
                cells.append((m.group(2), fg, bg, pen.bold, pen.italic))
        cols = max(cols, len(cells))
        rows.append(cells)
    pad = 12
    img = Image.new("RGB", (cols * cw + 2 * pad, len(rows) * ch + 2 * pad), BG)
    draw = ImageDraw.Draw(img)
    for y, cells in enumerate(rows):
        for x, (char, fg, bg, bold, italic) in enumerate(cells):
            px, py = pad + x * cw, pad + y * ch
            draw.rectangle([px, py, px + cw - 1, py + ch - 1], fill=bg)
            if char in "─│╭╮╰╯┼":
                box(draw, char, px, py, cw, ch, fg)
            elif char != " ":
                draw.text((px, py + 1), char, font=fonts[(bold, italic)], fill=fg)
    img.save(dst)


def box(draw, char, x, y, w, h, colour):
    """Box-drawing characters as lines, so borders join without gaps."""
    cx, cy = x + w // 2, y + h // 2
    right, down = char in "─╭╰┼", char in "│╭╮┼"
    left, up = char in "─╮╯┼", char in "│╰╯┼"
    if left:
        draw.line([x, cy, cx, cy], fill=colour)
    if right:
        draw.line([cx, cy, x + w, cy], fill=colour)
    if up:
        draw.line([cx, y, cx, cy], fill=colour)
    if down:
        draw.line([cx, cy, cx, y + h], fill=colour)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
