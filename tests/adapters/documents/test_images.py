"""Images sent with questions: their caps checked from the header (in-process here, as in a
reader), and their text read by the real OCR in a reader process (slow: seconds per image on a
busy machine), Chinese as well as English."""

from __future__ import annotations

import pytest

from tests.helpers import screenshots
from threadsage.adapters.documents.attachments import Attachment, AttachmentReader, readable_as
from threadsage.adapters.documents.images import MAX_PIXELS, ImageTooLarge, NoTextInImage, parse_image
from threadsage.adapters.documents.sections import UnreadableDocument
from threadsage.i18n import say


def test_a_decompression_bomb_is_refused_from_its_header() -> None:
    """10 gigapixels declared in a few kilobytes: decoded, it would take gigabytes and minutes."""
    bomb = screenshots.bomb()
    assert len(bomb) < 100_000
    with pytest.raises(ImageTooLarge):
        parse_image(bomb, "Bomb")
    with pytest.raises(ImageTooLarge, match="pixels"):  # past the cap, under Pillow's own twice-the-cap error
        parse_image(screenshots.bomb(width=8000, height=MAX_PIXELS // 8000 + 1), "Bomb")


def test_a_cut_off_or_false_image_is_unreadable_and_an_icon_has_no_text() -> None:
    for data in (screenshots.corrupt(), b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, b"GIF89a"):
        with pytest.raises(UnreadableDocument) as caught:
            parse_image(data, "Broken")
        assert not isinstance(caught.value, (ImageTooLarge, NoTextInImage))
    with pytest.raises(NoTextInImage):
        parse_image(screenshots.bomb(width=4, height=4), "Icon")


def test_images_are_read_by_their_name_or_media_type() -> None:
    assert readable_as("Screenshot 2024-05-01 at 10.00.00.png", "") == "Screenshot 2024-05-01 at 10.00.00.png"
    assert readable_as("image", "image/webp") == "image.webp" and readable_as("a", "image/gif") == "a.gif"
    assert readable_as("IMG_0001.HEIC", "image/heic") is None


@pytest.mark.slow  # real OCR in a reader process
async def test_the_text_of_screenshots_is_read_in_chinese_and_english_and_a_blank_one_is_said() -> None:
    files = [
        Attachment("错误.png", screenshots.chinese_dialog(), "image/png"),
        Attachment("trace.png", screenshots.terminal_trace(), "image/png"),
        Attachment("blank.png", screenshots.blank(), "image/png"),
    ]
    passages, problems = await AttachmentReader().read(files, "zh")
    text = {p["path"]: p["text"] for p in passages}
    assert "无法连接到许可证服务器" in text["错误.png"] and "请检查网络设置后重试" in text["错误.png"]
    assert "Traceback (most recent call last):" in text["trace.png"] and "fetch_invoices" in text["trace.png"]
    assert problems == [say("image_no_text", "zh", name="blank.png")]
