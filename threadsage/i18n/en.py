"""The English catalogue: every fixed text the bot says (keys shared with `zh.py`)."""

TEXTS: dict[str, str] = {
    # notices of the chat service
    "empty": "Ask me a question about the documents — your message was empty.",
    "apology": "Sorry — something went wrong while answering. Please try again in a moment.",
    "stale": "That question has already been answered or is no longer open.",
    "not_yours": "Only the person who asked can answer this clarification.",
    "rate_limited": "You're asking faster than I can keep up — please wait a minute and ask again.",
    "busy": "I'm answering a lot of questions right now — please ask again in a minute.",
    "no_documents": (
        "There are no documents I may use here, so I can't answer in this conversation. An operator can allow "
        "categories for it (THREADSAGE_CHANNEL_CATEGORIES, THREADSAGE_DEFAULT_CATEGORIES)."
    ),
    # what the graph says when it cannot answer from documents, and when it asks back
    "refusal": (
        "I can only answer questions about the organisation's documents, and I couldn't find anything "
        "about this there. Try rephrasing, or ask about a policy, a procedure or a tool."
    ),
    "not_covered": "The documents I have access to don't cover this.",
    "no_code": "The documents I have access to contain no code or technical passages about this.",
    "not_found": "I couldn't find this in the documents I have access to.",
    "clarify_which": "Which of these do you mean?",
    "clarify_more": "Could you say a bit more about what you need?",
    "clarify_unsure": "I'm not sure I understood. Which of these is closest to what you need?",
    "clarify_several": "Your question matches more than one part of the documents. Which one do you mean?",
    "from_documents": "From the documents:",
    "model_failed": "The language model could not answer just now, so here are the documents' own words instead.",
    "closest_passage": (
        "The documents don't answer this directly. The closest passage is *{label}*, and it may not answer your "
        "question:"
    ),
    "computed_offline": "Worked out with the calculator from the figures quoted: {expression} = {result}",
    "closest_in_other_language": (
        "The closest passage is *{label}*, in another language than your question: offline I cannot translate it "
        "nor tell whether it answers you. In its own words:"
    ),
    "from_section": "From *{label}*:",
    "chat_thanks": "You're welcome! Ask me anything else about the documents.",
    "chat_bye": "Bye for now! I'm here whenever you have a question about the documents.",
    "chat_how_are_you": (
        "Doing well, thanks for asking! I answer questions from the organisation's documents. "
        "Ask me something like “how many days of leave do I get?”."
    ),
    "chat_hello": (
        "Hi! I answer questions from the organisation's documents, with sources. "
        "Ask me something like “how many days of leave do I get?”."
    ),
    "web_label": "🌐 *From the web, not from the organisation's documents:*",
    "web_sources": "Web sources:",
    "answer_language": "English",
    # around an answer, on every platform
    "low_confidence": "Low confidence: the documents may not fully answer this.",
    "sources": "Sources",
    "handoff": "{contact} can help with this.",
    "step_searching": "Looking in the documents…",
    "step_checking": "Checking what I found…",
    "step_writing": "Writing the answer…",
    "step_found": "Found {passages} in {documents}",
    "found_passage": "{count} passage",
    "found_passages": "{count} passages",
    "slack_plan": "Looked up {count} questions",
    "tg_new_topic": "New question",
    # What Slack's status rotates through while a step lasts (assistant.threads.setStatus's loading_messages).
    "step_searching_more": "Reading the passages that match…|Weighing which sections answer it…",
    "step_checking_more": "Making sure each point has its source…|Looking for a passage that says otherwise…",
    "step_writing_more": "Putting the answer in order…|Adding the sources…",
    "coverage_general": "general",
    "coverage_document": "{count} document",
    "coverage_documents": "{count} documents",
    "new_started": "Started a new conversation — ask away.",
    # files sent with a question
    "file_too_big": "I couldn't use “{name}”: it is {size} MB, and I read files of up to {limit} MB.",
    "file_too_long": (
        "I couldn't use “{name}”: it is too long — I read PDFs of up to {pages} pages and {chars} characters"
        " of text. Please send the part that matters."
    ),
    "file_unsupported": (
        "I can't read “{name}”: I read PDF, Word (.docx), Markdown, HTML or plain text files,"
        " and images (PNG, JPEG, WebP, GIF)."
    ),
    "image_too_large": "I couldn't read “{name}”: it is larger than {limit} megapixels. Please send a screenshot.",
    "image_no_text": "I found no text in the image “{name}”. Please type what it shows, or send a sharper screenshot.",
    "image_unreadable": "I couldn't open the image “{name}”: it seems damaged or cut off. Please send it again.",
    "images_too_many": (
        "I read the first {limit} images of a message; {count} more went unread — please send them in another message."
    ),
    "file_not_fetched": "I couldn't download “{name}” — please try sending it again.",
    "file_unreadable": "I couldn't read “{name}”: {reason}.",
    "file_too_costly": (
        "I couldn't read “{name}”: reading it would take more than {seconds} s or {memory} MB, and I stopped."
        " Please send the part that matters, or a plain-text copy."
    ),
    "file_readers_busy": (
        "I'm reading many files just now and couldn't get to “{name}” — please send it again in a minute."
    ),
    "file_reading_yours": "I'm still reading the file you sent before — please send “{name}” again once I've answered.",
    "files_read_one": "I've read {names}. What would you like to know about it?",
    "files_read_many": "I've read {names}. What would you like to know about them?",
    "list_comma": ", ",
    "list_and": "{rest} and {last}",
    # the calculator and the calendar, when they cannot answer
    "calc_too_long": "That expression is too long (over {limit} characters).",
    "calc_unreadable": "I can't read “{expression}” as arithmetic.",
    "calc_zero": "That divides by zero, which has no answer.",
    "calc_not_allowed": "Only numbers, + − × ÷, %, powers and brackets are allowed in a calculation.",
    "calc_exponent": "That exponent is too large (the limit is {limit}).",
    "calc_too_large": "The result would be too large to be useful.",
    "calc_not_real": "That has no real-number answer.",
    "date_too_far": "That is too far ahead (the limit is {limit} days).",
    "date_not_after": "{target} is not after today ({today}).",
    "date_not_a_date": "“{text}” is not a date on the calendar.",
    "date_no_such_day": "{month:%B} has no day {day}.",
    # Slack
    "slack_invalid_button": "This button is not valid here.",
    "slack_thanks_up": "Thanks — your 👍 is recorded.",
    "slack_thanks_down": "Thanks — your 👎 is recorded. Rephrasing the question may help.",
    "slack_external": (
        "Sorry, I only answer people of the organisation that runs me, not guests from other organisations "
        "in a shared channel."
    ),
    "slack_hint_buttons": "…or reply in this thread in your own words.",
    "slack_hint_typed": "Reply in this thread in your own words.",
    "slack_chose": "<@{user}> chose: *{label}*",
    "slack_ask_usage": (
        "Ask me about the documents: `/ask <question>` answers you privately, here — share the answer with "
        "the channel or continue in our direct message with its buttons; `/ask new` starts our direct "
        "conversation over."
    ),
    "slack_asked": "<@{user}> asked: {question}",
    "slack_asked_privately": "You asked in <#{channel}>: {question}",
    "slack_answering_privately": "Looking it up — only you will see the answer.",
    "slack_share": "Share in channel",
    "slack_continue_dm": "Continue in a DM",
    "slack_shared_by": "<@{user}> shared an answer to: {question}",
    "slack_shared": "Shared in <#{channel}>: {link}",
    "slack_moved": "We continue in our direct message: {link}",
    "slack_share_stale": "This answer can no longer be shared or moved: ask again.",
    "slack_already_shared": "This answer is already there: {link}",
    "slack_not_a_member_ask": "I'm not a member of this conversation, so I'm answering you in our direct message.",
    "slack_not_a_member": (
        "I'm not a member of this conversation: invite me (`/invite @threadsage`), or ask me in a direct message."
    ),
    "slack_no_text": "That message has no text I could take as a question.",
    "slack_new_elsewhere": (
        "Every `/ask` here starts a thread of its own; `/ask new` starts our direct conversation over."
    ),
    "assistant_greeting": (
        "Hi! Ask me about the documents. While this panel is open beside a channel, I read what a question "
        "asked in that channel may read."
    ),
    "agent_greeting": (
        "Hi! Ask me about the documents. Each message you send here is a question of its own, answered in its "
        "thread; while you view a channel, I read what a question asked in that channel may read."
    ),
    "assistant_prompts": "Try asking",
    "assistant_prompt_category": "What do the {category} documents cover?",
    "home_can_answer": "What I can answer",
    "home_more": "…and {count} more",
    "home_scoped": "That is what a direct message may read; some channels read other categories.",
    "home_nothing": "No documents I may use yet: an operator adds them with `threadsage ingest`.",
    "home_how": "How to ask",
    "home_recent": "Your recent questions",
    "home_none_yet": "None yet — ask me something.",
    "home_how_lines": (
        "• *Here*: write to me in the Messages tab. Each thread there is a conversation of its own; "
        "`new` starts the main one over.\n"
        "• *In a channel*: mention <@{bot}>. I answer in a thread; reply there to follow up.\n"
        "• `/ask <question>` posts your question and my answer as a thread; `/ask -p <question>` answers "
        "you privately.\n"
        "• *Ask threadsage* in a message's ⋯ menu answers that message in its thread.\n"
        "• When a question is ambiguous I ask back: pick an option or answer in your own words."
    ),
    # Telegram
    "tg_command_ask": "Ask about the documents (-p in a group: answered privately)",
    "tg_command_new": "Start our conversation over",
    "tg_command_help": "How to ask",
    "tg_command_start": "What I can answer",
    "tg_not_allowed": (
        "Sorry, I can't answer here yet: I only answer chats that whoever runs this bot has allowed.\n"
        "Your user id: {user}\n"
        "This chat's id: {chat}\n"
        "If you should have access, send these ids to them: they add yours (for a private chat) or this chat's "
        "(for a group) to THREADSAGE_TELEGRAM_ALLOWED."
    ),
    "tg_not_allowed_click": (
        "Sorry, I can't answer here yet: whoever runs this bot has to allow this chat ({chat}) first."
    ),
    "tg_invalid_button": "This button is not valid.",
    "tg_asked_in": "You asked in {chat}: {question}",
    "tg_answered_privately": "I've answered {name} in a private chat.",
    "tg_start_me_first": (
        "{name}, I can't write to you privately yet: open a chat with me (@{username}), press Start, "
        "then ask again with /ask -p."
    ),
    "tg_thanks_up": "Thanks for the feedback! 👍",
    "tg_thanks_down": "Thanks — noted. 👎",
    "tg_hint_private": "Tap an option, or just type your answer.",
    "tg_hint_group": "Tap an option, or reply to this message with your answer.",
    "tg_new_in_group": (
        "In a group every new mention starts a fresh conversation; reply to one of my messages to continue one."
    ),
    "tg_start": (
        "Hi! I answer questions from your organisation's documents, with sources. "
        "Just type a question — or send a document (PDF, Word, Markdown, text) with your question as its caption, "
        "and I answer from it too. /help shows what else I can do."
    ),
    "tg_covers": "What I can answer here:",
    "tg_nothing_covered": "There are no documents I may use here yet.",
    "tg_help": (
        "Ask me a question about the documents and I answer with sources.\n"
        "• Here in a private chat, just type. /new starts a fresh conversation.\n"
        "• In a group, mention me (@{username}), use /ask <question>, or reply to one of my messages to follow up.\n"
        "• Send a document with your question as its caption, or reply to one with a question: "
        "I read it for this chat only.\n"
        "• When a question is ambiguous I ask back: tap an option or answer in your own words.\n"
        "• 👍/👎 under an answer tell the maintainers whether it helped."
    ),
    "doc_changed": "ℹ️ {titles} changed since the earlier answer here: this one is from the new version.",
    "resolve_button": "Resolved",
    "resolved_by": "✅ Marked resolved by {who}. The next person who asks will be answered from this thread.",
    "resolve_not_yours": "Only the person who asked, or an expert, can mark this thread resolved.",
    "resolved_already": "This thread is marked resolved already.",
    "escalate_button": "Still need help?",
    "escalation": "*{asker} asked in {channel}* (<{link}|the question>):\n>{question}",
    "escalation_unlinked": "*{asker} asked in {channel}*:\n>{question}",
    "escalation_attempt": "*What the bot answered:*",
    "escalation_uncovered": "_The documents do not cover it._",
    "escalation_how": "Reply in this thread: the first reply goes to the person who asked.",
    "escalated_privately": "I couldn't find this in the documents, so I've asked the experts — their answer will "
    "come in this thread.",
    "escalated_click": "I've asked the experts — their answer will come in this thread.",
    "escalated_already": "The experts have this question already — their answer will come in this thread.",
    "escalation_nowhere": "No experts are set up to ask.",
    "relayed": "*{expert} answered* (<{link}|in the experts' channel>):\n{answer}",
    "relayed_unlinked": "*{expert} answered*:\n{answer}",
    "relay_offer": "Your reply went to the person who asked. Save it as the verified answer to their question? The "
    "same question asked again is then answered with it, in your name.",
    "relay_gone": "The question was deleted, so your reply could not be passed on.",
    "expert_saved": "Saved as the verified answer (by {who}).",
    "expert_not_yours": "Only the expert who replied can save this reply.",
    "draft_attempt": "*The bot's draft:*",
    "draft_how": "Post it as is, discard it, or reply in this thread with your own answer: the first reply goes "
    "to the person who asked.",
    "draft_post": "Post as is",
    "draft_discard": "Discard",
    "draft_posted": "Posted as is by {expert}.",
    "draft_discarded": "Discarded by {expert}: reply in this thread to answer instead.",
    "draft_answered_already": "This question has been answered already.",
    "drafted_privately": "Your question is with the experts, who check the answer first: it will come in this thread.",
    "tg_escalation": "❓ <b>{asker}</b> asked in <b>{chat}</b>:\n\n{question}",
    "tg_escalation_how": "The documents do not cover it. Reply to this message: the first reply goes to the "
    "person who asked.",
    "tg_escalated": "I couldn't find this in the documents, so I've asked the experts — their answer will come "
    "as a reply here.",
    "tg_relayed": "<b>{expert}</b> answered:\n\n{answer}",
    "tg_escalation_attempt": "<b>What the bot answered:</b>\n{answer}",
    "tg_draft_attempt": "<b>The bot's draft:</b>\n{answer}",
    "tg_draft_how": "Post it as is, discard it, or reply to this message with your own answer: the first reply goes "
    "to the person who asked.",
    "tg_drafted": "Your question is with the experts, who check the answer first: it will come as a reply here.",
    "tg_draft_discarded": "Discarded by {expert}: reply to this message to answer instead.",
    "tg_draft_discarded_already": "This draft was discarded: reply to its message to answer instead.",
    "tg_draft_experts_only": "Only the experts' group can post or discard a draft.",
    "tg_draft_gone": "The question was deleted, so the draft could not be posted.",
    "verify_button": "Save as verified answer",
    "verify_offer": "You are a curator: save this answer as the verified answer to its question? It is then "
    "given first to questions like it, with your name.",
    "verify_saved": "Saved as the verified answer (by {who}).",
    "verify_not_curator": "Only curators (THREADSAGE_CURATORS) can save a verified answer.",
    "verify_stale": "A document this answer cites has changed since: ask again and save the new answer.",
    "verify_gone": "This answer is no longer in the records, so it cannot be saved.",
    "gap_closed": "This is now covered: you asked “{question}”.\n\n{answer}",
    "verified": "✅ Verified answer (by {who}, {day}).",
}
