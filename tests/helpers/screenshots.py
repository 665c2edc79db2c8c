"""Screenshots made with Pillow, as people send them: an error dialog, a terminal with a stack
trace, a settings page, at a laptop's 1280×800; and the hostile ones (a decompression bomb, a
corrupt file). Drawn with the fonts Debian ships (DejaVu; WenQuanYi Micro Hei for Chinese, which
`scripts/ensure-fonts.sh` installs), so that OCR is measured on real rendered text."""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONTS = Path("/usr/share/fonts/truetype")
SANS = FONTS / "dejavu/DejaVuSans.ttf"
MONO = FONTS / "dejavu/DejaVuSansMono.ttf"
CHINESE = FONTS / "wqy/wqy-microhei.ttc"
SIZE = (1280, 800)


def _font(path: Path, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(path), size)


def _png(image: Image.Image, kind: str = "PNG") -> bytes:
    out = io.BytesIO()
    image.save(out, kind)
    return out.getvalue()


def error_dialog(message: str = "Could not reach the license server at 10.0.4.12:27000 (ECONNREFUSED).") -> bytes:
    """A desktop with a modal error dialog: a title, the message, two buttons."""
    image = Image.new("RGB", SIZE, (46, 52, 64))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 1280, 32), fill=(30, 30, 30))
    draw.text((16, 7), "Activities     Files     Terminal", font=_font(SANS, 15), fill="white")
    draw.rectangle((330, 250, 950, 520), fill="white", outline=(120, 120, 120), width=2)
    draw.rectangle((330, 250, 950, 290), fill=(220, 220, 220))
    draw.text((350, 260), "Error", font=_font(SANS, 18), fill="black")
    draw.text((350, 320), "Sync failed", font=_font(SANS, 22), fill=(180, 0, 0))
    draw.text((350, 370), message, font=_font(SANS, 15), fill="black")
    draw.text((350, 400), "Error code: LIC-4012", font=_font(SANS, 15), fill="black")
    for x, label in ((720, "Retry"), (840, "Close")):
        draw.rectangle((x, 460, x + 95, 495), fill=(235, 235, 235), outline=(150, 150, 150))
        draw.text((x + 22, 468), label, font=_font(SANS, 16), fill="black")
    return _png(image)


def terminal_trace() -> bytes:
    """A terminal window with a Python stack trace."""
    image = Image.new("RGB", SIZE, (18, 18, 18))
    draw = ImageDraw.Draw(image)
    mono = _font(MONO, 16)
    lines = [
        "$ python -m billing.export --month 2024-05",
        "Traceback (most recent call last):",
        '  File "/srv/billing/export.py", line 88, in main',
        "    rows = fetch_invoices(session, month)",
        '  File "/srv/billing/db.py", line 41, in fetch_invoices',
        "    return session.execute(query).all()",
        "psycopg.OperationalError: connection to server at 10.2.0.7 port 5432 failed",
        "FATAL: password authentication failed for user billing_ro",
        "$ ",
    ]
    for row, line in enumerate(lines):
        draw.text((24, 24 + row * 26), line, font=mono, fill=(220, 220, 220))
    return _png(image)


def settings_page() -> bytes:
    """A web settings page: a side menu, labels and fields."""
    image = Image.new("RGB", SIZE, (248, 249, 251))
    draw = ImageDraw.Draw(image)
    sans = _font(SANS, 16)
    draw.rectangle((0, 0, 240, 800), fill=(33, 37, 41))
    for row, item in enumerate(("Dashboard", "Projects", "Billing", "Settings", "Members")):
        draw.text((28, 40 + row * 44), item, font=sans, fill="white")
    draw.text((280, 36), "Workspace settings", font=_font(SANS, 26), fill="black")
    fields = (("Workspace name", "Acme Support"), ("Single sign-on", "Enabled (Okta)"), ("Data region", "eu-west-1"))
    for row, (label, value) in enumerate(fields):
        y = 110 + row * 90
        draw.text((280, y), label, font=sans, fill=(60, 60, 60))
        draw.rectangle((280, y + 26, 760, y + 62), fill="white", outline=(200, 200, 200))
        draw.text((292, y + 34), value, font=sans, fill="black")
    draw.text((280, 400), "Session timeout must be between 5 and 480 minutes.", font=sans, fill=(180, 0, 0))
    return _png(image)


def chinese_dialog() -> bytes:
    """An error dialog in Chinese (needs Debian's fonts-wqy-microhei)."""
    image = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(image)
    font = _font(CHINESE, 24)
    draw.text((300, 300), "错误：无法连接到许可证服务器", font=font, fill="black")
    draw.text((300, 350), "请检查网络设置后重试", font=font, fill="black")
    return _png(image)


def blank() -> bytes:
    """A screenshot with no text on it."""
    return _png(Image.new("RGB", (640, 400), (200, 220, 240)))


def corrupt() -> bytes:
    """A PNG cut off after its header: Pillow knows its size, not its pixels."""
    return error_dialog()[:200]


def bomb(width: int = 100_000, height: int = 100_000) -> bytes:
    """A small, valid PNG whose header declares `width`×`height` pixels of one colour: tens of
    kilobytes on the wire, gigabytes once decoded."""
    row = b"\x00" + b"\x00" * ((width + 7) // 8)  # one bit per pixel, filter byte first
    rows = zlib.compressobj(9)
    data = b"".join(rows.compress(row) for _ in range(min(height, 64))) + rows.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


SCREENSHOTS: dict[str, Callable[[], bytes]] = {
    "error dialog": error_dialog,
    "terminal": terminal_trace,
    "settings page": settings_page,
    "chinese dialog": chinese_dialog,
}
