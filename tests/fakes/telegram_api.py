"""A fake Telegram Bot API over real HTTP, so the real python-telegram-bot is exercised.

It serves `POST /bot<token>/<method>` on 127.0.0.1 (aiohttp, in the test's event loop) and keeps
what Telegram keeps: the messages of each chat (people's and the bot's, with their keyboards and
reply links), the queue of updates (`getUpdates` long-polls on it, an offset confirms) and the
callback queries still to be answered. Where it matters to a bot it is as strict as Telegram:

- HTML is parsed (`parse_mode=HTML`): an unknown or unbalanced tag, or a bare `<` or `&`, fails
  with 400 "can't parse entities"; the stored message has the visible text and entities;
- text is at most 4096 characters after parsing, `callback_data` at most 64 bytes;
- a callback query can be answered once; an edit that changes nothing fails as "not modified";
  `editMessageText` without `reply_markup` removes the keyboard;
- a bot may not write first to a person: a private chat it has not seen (no message from it)
  answers 403 "bot can't initiate conversation with a user";
- `sendMessageDraft` only in private chats, with a non-zero `draft_id` (kept in `drafts`);
- topics in private chats (Bot API 9.3) when `private_topics` is on: `getMe` says
  `has_topics_enabled`, `createForumTopic` opens one (a name of 1-128 characters) and a message sent
  with its `message_thread_id` lands in it; a topic that was never opened is 400 "message thread not
  found", and `createForumTopic` in a private chat of a bot without topics is 400;
  `setMyCommands` / `getMyCommands` per `language_code`, `setChatMenuButton` / `getChatMenuButton`.

Flood limits as the Bot API FAQ states them: a bot sends "not more than 30 messages per second"
in all and "not more than 20 messages per minute" in a group; a message sent or edited past them is
answered 429 "Too Many Requests: retry after N" with `parameters.retry_after` (`flood_waits()`).

Files are kept as Telegram keeps them: `upload` stores one (a document for `send_file`),
`getFile` returns a File with its `file_path` — or 400 "file is too big" past the 20 MB bots may
download — and `GET /file/bot<token>/<file_path>` serves the bytes.

Tests push updates (`say`, `send_file`, `click`, `push`), delete a person's message (`delete`),
queue failures (`fail_next`: a 429 with `retry_after`, a 400 for HTML) and assert on `calls` (every
method with its decoded params) and `messages` (live: an edit changes the dict a test already holds).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from PIL import Image

BOT = {
    "id": 7000001,
    "is_bot": True,
    "first_name": "AskBot",
    "username": "ask_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}
MESSAGES = frozenset({
    "sendMessage", "sendPhoto", "sendDocument", "editMessageText", "editMessageReplyMarkup", "copyMessage",
    "forwardMessage",
})  # fmt: skip  # what the flood limits count
PER_SECOND, PER_GROUP_MINUTE = 30, 20
JSON_PARAMS = {
    "reply_markup", "reply_parameters", "link_preview_options", "allowed_updates", "entities", "commands", "scope",
    "menu_button",
}  # fmt: skip
COMMAND = re.compile(r"^[a-z0-9_]{1,32}$")  # BotCommand.command: 1-32 lowercase letters, digits, underscores
TAGS = {
    "b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "ins": "underline",
    "s": "strikethrough", "strike": "strikethrough", "del": "strikethrough", "tg-spoiler": "spoiler",
    "a": "text_link", "code": "code", "pre": "pre", "blockquote": "blockquote",
}  # fmt: skip
_MARKUP = re.compile(r"<(/?)([a-zA-Z-]+)((?:\s+[a-z-]+=\"[^\"]*\")*)\s*>|&(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);|[<&]")
_ENTITY_TEXT = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


class ApiError(Exception):
    def __init__(self, status: int, description: str, parameters: dict | None = None) -> None:
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    status: int = 200


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def parse_html(source: str) -> tuple[str, list[dict]]:
    """Telegram's HTML parse mode: the visible text and its entities, or ApiError(400)."""
    text, entities, open_tags = "", [], []
    position = 0
    for match in _MARKUP.finditer(source):
        text += source[position : match.start()]
        position = match.end()
        closing, tag, attributes, entity = (
            match.group(1),
            (match.group(2) or "").lower(),
            match.group(3),
            match.group(4),
        )
        if entity:
            text += _ENTITY_TEXT.get(entity) or chr(int(entity[2:], 16) if entity[1:2] == "x" else int(entity[1:]))
        elif not tag:
            raise ApiError(
                400, f"Bad Request: can't parse entities: unescaped {match.group(0)!r} at byte offset {match.start()}"
            )
        elif tag not in TAGS:
            raise ApiError(
                400, f'Bad Request: can\'t parse entities: Unsupported start tag "{tag}" at byte offset {match.start()}'
            )
        elif closing:
            if not open_tags or open_tags[-1][0] != tag:
                raise ApiError(
                    400,
                    f'Bad Request: can\'t parse entities: Unexpected end tag "{tag}" at byte offset {match.start()}',
                )
            _tag, start, attrs = open_tags.pop()
            entity_dict = {"type": TAGS[tag], "offset": start, "length": utf16_len(text) - start}
            if tag == "a":
                entity_dict["url"] = re.search(r'href="([^"]*)"', attrs).group(1)  # type: ignore[union-attr]
            if entity_dict["length"]:
                entities.append(entity_dict)
        else:
            open_tags.append((tag, utf16_len(text), attributes or ""))
    if open_tags:
        raise ApiError(
            400,
            f"Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"{open_tags[-1][0]}\"",
        )
    text += source[position:]
    return text, sorted(entities, key=lambda e: e["offset"])


class FakeBotAPI:
    def __init__(self, token: str) -> None:
        self.token = token
        self.calls: list[Call] = []
        self.messages: dict[tuple[int, int], dict] = {}  # (chat id, message id) → message
        self.chats: dict[int, dict] = {}
        self.webhook: dict[str, Any] = {}
        self.commands: dict[str, list[dict]] = {}  # language_code ("" the default) → setMyCommands' list
        self.menu_button: dict[str, Any] = {}  # the default menu button (setChatMenuButton without chat_id)
        self.drafts: dict[int, list[tuple[int, str]]] = {}  # chat id → (draft_id, visible text), in order
        self._updates: list[dict] = []
        self._update_ids = itertools.count(815263001)
        self._message_ids = itertools.count(500)
        self._query_ids = itertools.count(530266716548192375)
        self._open_queries: set[str] = set()
        self._failures: dict[str, list[tuple[ApiError, bool]]] = {}
        self._new_update = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.url = ""
        self.files: dict[str, tuple[dict, bytes]] = {}  # file_id → (File, content)
        self.downloaded = 0  # bytes of files sent
        self.private_topics = False  # the bot's topic mode in private chats (@BotFather)
        self.topics: dict[tuple[int, int], str] = {}  # (chat id, message_thread_id) → name
        self._topic_ids = itertools.count(9900)
        self._sent_at: dict[str, list[float]] = {}  # "all" or a group's id → when its messages were sent

    # --- server ----------------------------------------------------------------------------

    async def start(self) -> FakeBotAPI:
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        return self

    async def stop(self) -> None:
        self._new_update.set()  # long polls still waiting (their client has gone) return now
        if self._runner:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.match_info["token"] != self.token:
            return _error(ApiError(401, "Unauthorized"))
        form = await request.post() if request.can_read_body else {}
        params = {k: json.loads(v) if k in JSON_PARAMS else v for k, v in form.items() if isinstance(v, str)}
        call = Call(method, params)
        self.calls.append(call)
        try:
            self._maybe_fail(method, params)
            self._flood_control(method, params)
            handler = getattr(self, f"api_{method}", None)
            if handler is None:
                raise ApiError(404, "Not Found: method not found")
            result = await handler(**params) if asyncio.iscoroutinefunction(handler) else handler(**params)
        except ApiError as exc:
            call.status = exc.status
            return _error(exc)
        return web.json_response({"ok": True, "result": result})

    def _maybe_fail(self, method: str, params: dict) -> None:
        queue = self._failures.get(method)
        if queue:
            error, html_only = queue[0]
            if not html_only or params.get("parse_mode") == "HTML":
                queue.pop(0)
                raise error

    def _flood_control(self, method: str, params: dict) -> None:
        if method not in MESSAGES:
            return
        now = time.monotonic()
        limits = [("all", PER_SECOND, 1.0)]
        if str(params.get("chat_id", "")).startswith(("-", "@")):
            limits.append((str(params["chat_id"]), PER_GROUP_MINUTE, 60.0))
        for key, calls, seconds in limits:
            sent = [t for t in self._sent_at.get(key, []) if t > now - seconds]
            self._sent_at[key] = sent
            if len(sent) >= calls:
                wait = max(1, int(sent[0] + seconds - now + 1))
                raise ApiError(429, f"Too Many Requests: retry after {wait}", {"retry_after": wait})
        for key, _, _ in limits:
            self._sent_at[key].append(now)

    # --- what tests do ---------------------------------------------------------------------

    def flood_waits(self) -> list[Call]:
        """The calls answered 429 (a flood limit passed, or queued by `fail_next`)."""
        return [call for call in self.calls if call.status == 429]

    def fail_next(
        self, method: str, status: int, description: str, parameters: dict | None = None, html_only: bool = False
    ) -> None:
        """The next call of `method` (with parse_mode=HTML, if `html_only`) fails like this."""
        self._failures.setdefault(method, []).append((ApiError(status, description, parameters), html_only))

    def push(self, update: dict) -> dict:
        update = {"update_id": next(self._update_ids), **update}
        self._updates.append(update)
        self._new_update.set()
        return update

    def say(self, chat: dict, user: dict, text: str, **options: Any) -> dict:
        """A person's message arriving as an update (see `message`); returns the message."""
        message = self.message(chat, user, text, **options)
        self.push({"edited_message" if "edit_date" in message else "message": message})
        return message

    def message(
        self,
        chat: dict,
        user: dict,
        text: str,
        reply_to: dict | None = None,
        topic: int | None = None,
        entities: list[dict] | None = None,
        edit_of: dict | None = None,
    ) -> dict:
        """A person's message (or an edit of one), kept in its chat; mention and command
        entities are found in the text unless given."""
        self.chats[chat["id"]] = chat
        message: dict[str, Any] = {
            "message_id": edit_of["message_id"] if edit_of else next(self._message_ids),
            "from": user,
            "chat": chat,
            "date": int(time.time()),
            "text": text,
        }
        if entities is None:
            entities = [
                {
                    "type": "bot_command" if m.group(0).startswith("/") else "mention",
                    "offset": utf16_len(text[: m.start()]),
                    "length": utf16_len(m.group(0)),
                }
                for m in re.finditer(r"(?<!\S)(/\w+(?:@\w+)?|@\w+)", text)
                if m.group(0).startswith("@") or m.start() == 0
            ]
        if entities:
            message["entities"] = entities
        if reply_to is not None:
            message["reply_to_message"] = _one_level(reply_to)
        if topic is not None:
            message.update(message_thread_id=topic, is_topic_message=True)
        if edit_of is not None:
            message["edit_date"] = int(time.time())
        self.messages[(chat["id"], message["message_id"])] = message
        return message

    def upload(self, name: str, content: bytes, mime_type: str, size: int | None = None) -> dict:
        """A document as a message carries it (`size` may claim more than the content holds)."""
        n = len(self.files) + 1
        file_id, unique = f"BQACAgIAAxkBAAI{n:04d}", f"AgAD{n:04d}"
        size = len(content) if size is None else size
        file = {"file_id": file_id, "file_unique_id": unique, "file_size": size}
        self.files[file_id] = ({**file, "file_path": f"documents/file_{n}.{name.rsplit('.', 1)[-1]}"}, content)
        return {"file_name": name, "mime_type": mime_type, **file}

    def upload_photo(self, content: bytes) -> list[dict]:
        """A photo as Telegram keeps it: JPEG, in sizes up to 90, 320 and 800 pixels wide and the
        size sent (each `PhotoSize` a file of its own), smallest first."""
        image = Image.open(io.BytesIO(content)).convert("RGB")
        sizes = []
        for width in sorted({min(w, image.width) for w in (90, 320, 800, image.width)}):
            scaled = image.resize((width, max(1, image.height * width // image.width)))
            out = io.BytesIO()
            scaled.save(out, "JPEG", quality=90)
            n = len(self.files) + 1
            file = {"file_id": f"AgACAgIAAxkBAAI{n:04d}", "file_unique_id": f"AQAD{n:04d}", "file_size": out.tell()}
            self.files[file["file_id"]] = ({**file, "file_path": f"photos/file_{n}.jpg"}, out.getvalue())
            sizes.append({**file, "width": scaled.width, "height": scaled.height})
        return sizes

    def send_file(
        self,
        chat: dict,
        user: dict,
        caption: str = "",
        document: dict | None = None,
        photo: list[dict] | None = None,
        **options: Any,
    ) -> dict:
        """A person's document or photo (its sizes, from `upload_photo`) with a caption, as an
        update; returns it."""
        message = self.message(chat, user, caption, **options)
        del message["text"]
        if "entities" in message:
            message["caption_entities"] = message.pop("entities")
        if caption:
            message["caption"] = caption
        if document is not None:
            message["document"] = document
        else:
            message["photo"] = photo
        self.push({"message": message})
        return message

    def click(self, message: dict, user: dict, data: str | None = None, option: int = 0) -> str:
        """A click on a button of a bot message (or forged `data`); returns the query id."""
        stored = self.messages[(message["chat"]["id"], message["message_id"])]
        if data is None:
            data = [b for row in stored["reply_markup"]["inline_keyboard"] for b in row][option]["callback_data"]
        query_id = str(next(self._query_ids))
        self._open_queries.add(query_id)
        self.push(
            {
                "callback_query": {
                    "id": query_id,
                    "from": user,
                    "message": dict(stored),
                    "chat_instance": "-6452339437402373185",
                    "data": data,
                }
            }
        )
        return query_id

    def delete(self, message: dict) -> None:
        """A person deletes a message: gone from its chat (the Bot API sends bots no update for it)."""
        del self.messages[(message["chat"]["id"], message["message_id"])]

    def sent(self, chat_id: int) -> list[dict]:
        """The bot's messages in a chat, oldest first, as they are now (after edits)."""
        return [m for (c, _), m in sorted(self.messages.items()) if c == chat_id and m["from"]["id"] == BOT["id"]]

    def calls_of(self, method: str, ok_only: bool = True) -> list[dict]:
        return [c.params for c in self.calls if c.method == method and (c.status == 200 or not ok_only)]

    def answers_to(self, query_id: str) -> list[dict]:
        return [p for p in self.calls_of("answerCallbackQuery") if p["callback_query_id"] == query_id]

    async def wait_for(self, condition: Any, timeout: float = 10.0) -> Any:
        """Poll `condition()` until it is truthy; its value, or AssertionError after `timeout`."""
        deadline = time.monotonic() + timeout
        while not (value := condition()):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting; calls so far: {[c.method for c in self.calls]}")
            await asyncio.sleep(0.01)
        return value

    async def quiet(self, seconds: float = 0.3) -> None:
        """Wait until no call has arrived for `seconds` (for asserting that nothing more happens)."""
        count = -1
        while count != len(self.calls):
            count = len(self.calls)
            await asyncio.sleep(seconds)

    # --- Bot API methods -------------------------------------------------------------------

    def api_getMe(self, **_: Any) -> dict:  # noqa: N802 (Bot API names)
        return {**BOT, "has_topics_enabled": self.private_topics, "allows_users_to_create_topics": self.private_topics}

    def api_createForumTopic(self, chat_id: str, name: str, **_: Any) -> dict:  # noqa: N802
        """A topic in a forum supergroup or, with topics on, in a private chat with the bot."""
        chat = self._chat(chat_id)
        if not 1 <= len(name) <= 128:
            raise ApiError(400, "Bad Request: TOPIC_NAME_INVALID")
        forum = self.private_topics if chat["type"] == "private" else bool(chat.get("is_forum"))
        if not forum:
            raise ApiError(400, "Bad Request: the chat is not a forum")
        topic = next(self._topic_ids)
        self.topics[(int(chat_id), topic)] = name
        return {"message_thread_id": topic, "name": name, "icon_color": 7322096}

    def api_setMyCommands(  # noqa: N802
        self, commands: list[dict], scope: dict | None = None, language_code: str = "", **_: Any
    ) -> bool:
        """At most 100 commands, each 1-32 of [a-z0-9_] with a description of 1-256 characters;
        `language_code` empty or a two-letter ISO 639-1 code (core.telegram.org/bots/api#setmycommands)."""
        if len(commands) > 100 or (language_code and not re.fullmatch(r"[a-z]{2}", language_code)):
            raise ApiError(400, "Bad Request: invalid parameters")
        for command in commands:
            if not COMMAND.match(command.get("command", "")) or not 1 <= len(command.get("description", "")) <= 256:
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        self.commands[language_code] = commands
        return True

    def api_setChatMenuButton(self, chat_id: str | None = None, menu_button: dict | None = None) -> bool:  # noqa: N802
        if chat_id is None:
            self.menu_button = menu_button or {"type": "default"}
        return True

    def api_deleteWebhook(self, drop_pending_updates: str = "false") -> bool:  # noqa: N802
        self.webhook = {}
        return True

    def api_setWebhook(self, url: str, secret_token: str | None = None, **_: Any) -> bool:  # noqa: N802
        self.webhook = {"url": url, "secret_token": secret_token}
        return True

    async def api_getUpdates(self, offset: str | None = None, timeout: str = "0", **_: Any) -> list[dict]:  # noqa: N802
        if self.webhook:
            raise ApiError(409, "Conflict: can't use getUpdates method while webhook is active")
        if offset is not None:
            self._updates = [u for u in self._updates if u["update_id"] >= int(offset)]  # confirmed
        if not self._updates:
            self._new_update.clear()
            with_timeout = float(timeout)
            if with_timeout:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._new_update.wait(), with_timeout)
        return list(self._updates[:100])

    def api_sendMessage(  # noqa: N802
        self,
        chat_id: str,
        text: str,
        parse_mode: str | None = None,
        reply_markup: dict | None = None,
        reply_parameters: dict | None = None,
        message_thread_id: str | None = None,
        **_: Any,
    ) -> dict:
        chat = self._chat(chat_id)
        visible, entities = self._text(text, parse_mode)
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "from": {k: BOT[k] for k in ("id", "is_bot", "first_name", "username")},
            "chat": chat,
            "date": int(time.time()),
            "text": visible,
        }
        if entities:
            message["entities"] = entities
        if reply_markup:
            message["reply_markup"] = self._keyboard(reply_markup)
        if reply_parameters:
            quoted = self.messages.get((int(chat_id), int(reply_parameters["message_id"])))
            if quoted is None and not reply_parameters.get("allow_sending_without_reply"):
                raise ApiError(400, "Bad Request: message to be replied not found")
            if quoted is not None:
                message["reply_to_message"] = _one_level(quoted)
                if message_thread_id is None and quoted.get("is_topic_message"):
                    # A reply lands in the forum topic of the message it answers (tdlib/telegram-bot-api#798).
                    message_thread_id = str(quoted["message_thread_id"])
        if message_thread_id is not None:
            if chat["type"] == "private" and (int(chat_id), int(message_thread_id)) not in self.topics:
                raise ApiError(400, "Bad Request: message thread not found")
            message.update(message_thread_id=int(message_thread_id), is_topic_message=True)
        self.messages[(int(chat_id), message["message_id"])] = message
        return message

    def api_sendMessageDraft(  # noqa: N802
        self,
        chat_id: str,
        draft_id: str,
        text: str = "",
        parse_mode: str | None = None,
        message_thread_id: str | None = None,
        **_: Any,
    ) -> bool:
        """A partial message streamed to "the target private chat" under a non-zero `draft_id`;
        its text 0-4096 characters after entities parsing, empty for a "Thinking…" placeholder
        (core.telegram.org/bots/api#sendmessagedraft). The fake keeps each chat's drafts in order
        (`drafts`); a draft is no message and leaves `messages` alone."""
        chat = self._chat(chat_id)
        if chat.get("type") != "private":
            raise ApiError(400, "Bad Request: the chat is not a private chat")  # the documented limit; wording ours
        if not re.fullmatch(r"-?\d+", draft_id) or int(draft_id) == 0:
            raise ApiError(400, "Bad Request: draft_id must be non-zero")
        visible = self._text(text, parse_mode)[0] if text else ""
        self.drafts.setdefault(int(chat_id), []).append((int(draft_id), visible))
        return True

    def api_getMyCommands(self, scope: dict | None = None, language_code: str = "", **_: Any) -> list[dict]:  # noqa: N802
        """The list setMyCommands registered for `language_code` ("" the default)."""
        return self.commands.get(language_code, [])

    def api_getChatMenuButton(self, chat_id: str | None = None, **_: Any) -> dict:  # noqa: N802
        return self.menu_button or {"type": "default"}

    def api_editMessageText(  # noqa: N802
        self,
        chat_id: str,
        message_id: str,
        text: str,
        parse_mode: str | None = None,
        reply_markup: dict | None = None,
        **_: Any,
    ) -> dict:
        message = self._own_message(chat_id, message_id)
        visible, entities = self._text(text, parse_mode)
        markup = self._keyboard(reply_markup) if reply_markup else None
        if (
            visible == message["text"]
            and entities == message.get("entities", [])
            and markup == message.get("reply_markup")
        ):
            raise ApiError(
                400,
                "Bad Request: message is not modified: "
                "specified new message content and reply markup are exactly the same",
            )
        message.update(text=visible, entities=entities, edit_date=int(time.time()))
        if markup:
            message["reply_markup"] = markup
        else:
            message.pop("reply_markup", None)
        return message

    def api_editMessageReplyMarkup(  # noqa: N802
        self, chat_id: str, message_id: str, reply_markup: dict | None = None, **_: Any
    ) -> dict:
        message = self._own_message(chat_id, message_id)
        markup = self._keyboard(reply_markup) if reply_markup else None
        if markup == message.get("reply_markup"):
            raise ApiError(400, "Bad Request: message is not modified")
        if markup:
            message["reply_markup"] = markup
        else:
            message.pop("reply_markup", None)
        return message

    def api_answerCallbackQuery(self, callback_query_id: str, text: str | None = None, **_: Any) -> bool:  # noqa: N802
        if callback_query_id not in self._open_queries:
            raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
        if text is not None and len(text) > 200:
            raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        self._open_queries.discard(callback_query_id)
        return True

    def api_sendChatAction(self, chat_id: str, action: str, **_: Any) -> bool:  # noqa: N802
        return True

    def api_getFile(self, file_id: str, **_: Any) -> dict:  # noqa: N802
        if file_id not in self.files:
            raise ApiError(400, "Bad Request: invalid file_id")
        file, _content = self.files[file_id]
        if file["file_size"] > 20 * 1024 * 1024:
            raise ApiError(400, "Bad Request: file is too big")
        return file

    async def _download(self, request: web.Request) -> web.Response:
        self.calls.append(Call("download", {"path": request.match_info["path"]}))
        if request.match_info["token"] != self.token:
            return web.Response(status=401, text="Unauthorized")
        path = request.match_info["path"]
        found = next((content for file, content in self.files.values() if file["file_path"] == path), None)
        if found is None:
            return web.Response(status=404, text="Not Found")
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
        await response.prepare(request)
        try:
            for start in range(0, len(found), 64 * 1024):  # in pieces, counted: a client may stop reading
                await response.write(found[start : start + 64 * 1024])
                self.downloaded += len(found[start : start + 64 * 1024])
            await response.write_eof()
        except ConnectionError:
            pass
        return response

    # --- helpers ---------------------------------------------------------------------------

    def _chat(self, chat_id: str) -> dict:
        """A chat the bot may write to: one it has seen. A private chat it has not is a person who
        never started the bot, which Telegram refuses with 403."""
        chat = self.chats.get(int(chat_id))
        if chat is None and int(chat_id) > 0:
            raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
        if chat is None:
            raise ApiError(400, "Bad Request: chat not found")
        return chat

    def _text(self, text: str, parse_mode: str | None) -> tuple[str, list[dict]]:
        visible, entities = parse_html(text) if parse_mode == "HTML" else (text, [])
        if not visible.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if utf16_len(visible) > 4096:
            raise ApiError(400, "Bad Request: message is too long")
        return visible, entities

    def _keyboard(self, markup: dict) -> dict:
        for row in markup.get("inline_keyboard", []):
            for button in row:
                data = button.get("callback_data")
                if data is not None and not 1 <= len(data.encode()) <= 64:
                    raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
        return markup

    def _own_message(self, chat_id: str, message_id: str) -> dict:
        message = self.messages.get((int(chat_id), int(message_id)))
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if message["from"]["id"] != BOT["id"]:
            raise ApiError(400, "Bad Request: message can't be edited")
        return message


def _one_level(message: dict) -> dict:
    """As Telegram nests a replied-to message: without its own reply_to_message."""
    return {k: v for k, v in message.items() if k != "reply_to_message"}


def _error(error: ApiError) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": error.status, "description": error.description}
    if error.parameters:
        body["parameters"] = error.parameters
    return web.json_response(body, status=error.status)
