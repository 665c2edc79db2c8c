"""The Chinese (简体中文) catalogue: the keys and `{placeholders}` of `en.py`, in Chinese."""

TEXTS: dict[str, str] = {
    # notices of the chat service
    "empty": "请向我提一个关于文档的问题——你的消息是空的。",
    "apology": "抱歉，回答时出了点问题。请稍后再试。",
    "stale": "这个问题已经回答过了，或者已不再等待回答。",
    "not_yours": "只有提问的人可以回答这个澄清问题。",
    "rate_limited": "你提问的速度太快了，我跟不上——请等一分钟再问。",
    "busy": "我现在正在回答很多问题——请一分钟后再问。",
    "no_documents": (
        "这里没有我可以使用的文档，所以我无法在这个对话中回答。管理员可以为它开放类别"
        "（THREADSAGE_CHANNEL_CATEGORIES、THREADSAGE_DEFAULT_CATEGORIES）。"
    ),
    # what the graph says when it cannot answer from documents, and when it asks back
    "refusal": (
        "我只能回答关于本组织文档的问题，而文档中找不到与此相关的内容。请换个说法，或者问问某项政策、流程或工具。"
    ),
    "not_covered": "我能查阅的文档没有涉及这个问题。",
    "no_code": "我能查阅的文档中没有关于这个问题的代码或技术内容。",
    "not_found": "我在能查阅的文档中没有找到这方面的内容。",
    "clarify_which": "你指的是下面哪一个？",
    "clarify_more": "能再具体说说你需要什么吗？",
    "clarify_unsure": "我不太确定是否理解了你的问题。下面哪一项最接近你的需要？",
    "clarify_several": "你的问题与文档中的多个部分都相符。你指的是哪一个？",
    "from_documents": "文档中的相关内容：",
    "model_failed": "语言模型暂时无法回答，以下是文档中的原文。",
    "closest_passage": "文档没有直接回答这个问题。最接近的是 *{label}*，但它可能并不能回答你的问题：",
    "computed_offline": "根据所引数字用计算器算出：{expression} = {result}",
    "closest_in_other_language": "最接近的是 *{label}*，与问题语言不同：离线时我无法翻译，也无法确定它是否回答了你：",
    "from_section": "摘自 *{label}*：",
    "chat_thanks": "不客气！关于文档还有什么问题，随时问我。",
    "chat_bye": "再见！关于文档有问题时随时来问我。",
    "chat_how_are_you": "挺好的，谢谢关心！我根据本组织的文档回答问题。可以问我，比如“我有多少天年假？”。",
    "chat_hello": "你好！我根据本组织的文档回答问题，并注明出处。可以问我，比如“我有多少天年假？”。",
    "web_label": "🌐 *来自网络，而非本组织的文档：*",
    "web_sources": "网络来源：",
    "answer_language": "Simplified Chinese (简体中文)",
    # around an answer, on every platform
    "low_confidence": "可信度低：文档可能没有完全回答这个问题。",
    "sources": "来源",
    "handoff": "{contact} 可以帮你处理这个问题。",
    "step_searching": "正在查找文档…",
    "step_checking": "正在核对找到的内容…",
    "step_writing": "正在撰写回答…",
    "step_found": "在{documents}中找到 {passages}",
    "found_passage": "{count} 段",
    "found_passages": "{count} 段",
    "slack_plan": "查了 {count} 个问题",
    "tg_new_topic": "新问题",
    "step_searching_more": "正在阅读相关段落…|正在判断哪些章节能回答这个问题…",
    "step_checking_more": "正在确认每一点都有出处…|正在查看是否有说法不同的段落…",
    "step_writing_more": "正在整理回答…|正在添加出处…",
    "coverage_general": "通用",
    "coverage_document": "{count} 篇文档",
    "coverage_documents": "{count} 篇文档",
    "new_started": "已开始新的对话——请提问吧。",
    # files sent with a question
    "file_too_big": "我无法使用“{name}”：它有 {size} MB，而我只读取不超过 {limit} MB 的文件。",
    "file_too_long": (
        "我无法使用“{name}”：文件太长——我只读取不超过 {pages} 页、{chars} 个字符文本的 PDF。请只发送相关的部分。"
    ),
    "file_unsupported": (
        "我无法读取“{name}”：我能读取 PDF、Word（.docx）、Markdown、HTML 或纯文本文件，"
        "以及图片（PNG、JPEG、WebP、GIF）。"
    ),
    "image_too_large": "我无法读取“{name}”：它超过了 {limit} 百万像素。请发送截图。",
    "image_no_text": "我在图片“{name}”中没有找到文字。请输入图片中的内容，或发送更清晰的截图。",
    "image_unreadable": "我无法打开图片“{name}”：它似乎已损坏或不完整。请重新发送。",
    "images_too_many": "每条消息我只读取前 {limit} 张图片；另外 {count} 张没有读取——请在另一条消息中发送。",
    "file_not_fetched": "我无法下载“{name}”——请再发送一次。",
    "file_unreadable": "我无法读取“{name}”：{reason}。",
    "file_too_costly": (
        "我无法读取“{name}”：读取它需要超过 {seconds} 秒或 {memory} MB，我已停止。请发送需要的部分，或纯文本版本。"
    ),
    "file_readers_busy": "我现在正在读取很多文件，没能读取“{name}”——请过一分钟再发送一次。",
    "file_reading_yours": "我还在读取你之前发送的文件——请在我回答之后再发送“{name}”。",
    "files_read_one": "我已读取{names}。你想了解它的哪些内容？",
    "files_read_many": "我已读取{names}。你想了解它们的哪些内容？",
    "list_comma": "、",
    "list_and": "{rest}和{last}",
    # the calculator and the calendar, when they cannot answer
    "calc_too_long": "这个算式太长了（超过 {limit} 个字符）。",
    "calc_unreadable": "我无法把“{expression}”当作算式来计算。",
    "calc_zero": "这个算式除以零，没有答案。",
    "calc_not_allowed": "计算中只能使用数字、+ − × ÷、%、乘方和括号。",
    "calc_exponent": "指数太大了（上限是 {limit}）。",
    "calc_too_large": "结果太大，没有实际意义。",
    "calc_not_real": "这个算式没有实数解。",
    "date_too_far": "这个日期太远了（上限是 {limit} 天）。",
    "date_not_after": "{target:%Y-%m-%d} 不在今天（{today:%Y-%m-%d}）之后。",
    "date_not_a_date": "“{text}”不是日历上的日期。",
    "date_no_such_day": "{month:%Y-%m} 没有 {day} 日。",
    # Slack
    "slack_invalid_button": "这个按钮在这里无效。",
    "slack_thanks_up": "谢谢——你的 👍 已记录。",
    "slack_thanks_down": "谢谢——你的 👎 已记录。换个说法提问也许会有帮助。",
    "slack_external": "抱歉，我只回答运行我的组织里的人，不回答共享频道中来自其他组织的访客。",
    "slack_hint_buttons": "……或者直接在这个消息串里用你自己的话回复。",
    "slack_hint_typed": "请在这个消息串里用你自己的话回复。",
    "slack_chose": "<@{user}> 选择了：*{label}*",
    "slack_ask_usage": (
        "问我关于文档的问题：`/ask <问题>` 在这里单独回答你——用回答下的按钮可以分享到频道，或转到我们的私信继续；"
        "`/ask new` 重新开始我们的私信对话。"
    ),
    "slack_asked": "<@{user}> 问：{question}",
    "slack_asked_privately": "你在 <#{channel}> 问：{question}",
    "slack_answering_privately": "正在查找——只有你能看到回答。",
    "slack_share": "分享到频道",
    "slack_continue_dm": "在私信中继续",
    "slack_shared_by": "<@{user}> 分享了这个问题的回答：{question}",
    "slack_shared": "已分享到 <#{channel}>：{link}",
    "slack_moved": "我们在私信里继续：{link}",
    "slack_share_stale": "这个回答已无法分享或转移：请重新提问。",
    "slack_already_shared": "这个回答已经在那里了：{link}",
    "slack_not_a_member_ask": "我不是这个对话的成员，所以在我们的私信里回答你。",
    "slack_not_a_member": "我不是这个对话的成员：请邀请我（`/invite @threadsage`），或者在私信里问我。",
    "slack_no_text": "这条消息没有可以当作问题的文字。",
    "slack_new_elsewhere": "这里的每个 `/ask` 都会开启一个单独的消息串；`/ask new` 会重新开始我们的私信对话。",
    "assistant_greeting": "你好！可以问我文档里的问题。面板开在某个频道旁时，我只读取在该频道提问可读取的内容。",
    "agent_greeting": (
        "你好！可以问我文档里的问题。在这里发的每条消息都是一个独立的问题，我会在它的话题里回答；"
        "你查看某个频道时，我只读取在该频道提问可读取的内容。"
    ),
    "assistant_prompts": "试着问",
    "assistant_prompt_category": "{category} 类文档涵盖哪些内容？",
    "home_can_answer": "我能回答什么",
    "home_more": "……还有 {count} 个",
    "home_scoped": "以上是私信可以查阅的内容；有些频道可以查阅其他类别。",
    "home_nothing": "还没有我可以使用的文档：管理员可以用 `threadsage ingest` 添加。",
    "home_how": "怎么提问",
    "home_recent": "你最近的问题",
    "home_none_yet": "还没有——问我点什么吧。",
    "home_how_lines": (
        "• *这里*：在“消息”标签页给我发消息。每个消息串都是一段独立的对话；`new` 会重新开始主对话。\n"
        "• *在频道里*：提及 <@{bot}>。我会在消息串里回答；在那里回复即可追问。\n"
        "• `/ask <问题>` 会把你的问题和我的回答贴成一个消息串；`/ask -p <问题>` 单独回答你。\n"
        "• 在消息的 ⋯ 菜单中选择 *Ask threadsage*，我会在它的消息串里回答那条消息。\n"
        "• 问题有歧义时我会反问：选一个选项，或者用你自己的话回答。"
    ),
    # Telegram
    "tg_command_ask": "询问文档内容（群组中加 -p：私下回答）",
    "tg_command_new": "重新开始对话",
    "tg_command_help": "如何提问",
    "tg_command_start": "我能回答什么",
    "tg_not_allowed": (
        "抱歉，我暂时还不能在这里回答：我只回答运行这个机器人的人允许的聊天。\n"
        "你的用户 ID：{user}\n"
        "这个聊天的 ID：{chat}\n"
        "如果你应该有权限，请把这些 ID 发给他们：他们会把你的 ID（私聊）或这个聊天的 ID（群组）"
        "加入 THREADSAGE_TELEGRAM_ALLOWED。"
    ),
    "tg_not_allowed_click": "抱歉，我暂时还不能在这里回答：运行这个机器人的人需要先允许这个聊天（{chat}）。",
    "tg_asked_in": "你在 {chat} 问：{question}",
    "tg_answered_privately": "我已在私聊里回答了 {name}。",
    "tg_start_me_first": (
        "{name}，我还不能私下给你发消息：请打开与我（@{username}）的聊天，点“开始”，然后再用 /ask -p 提问。"
    ),
    "tg_invalid_button": "这个按钮无效。",
    "tg_thanks_up": "感谢你的反馈！👍",
    "tg_thanks_down": "谢谢——已记下。👎",
    "tg_hint_private": "点一个选项，或者直接输入你的回答。",
    "tg_hint_group": "点一个选项，或者回复这条消息给出你的回答。",
    "tg_new_in_group": "在群组里，每次新的提及都会开始一段新对话；回复我的某条消息即可继续之前的对话。",
    "tg_start": (
        "你好！我根据你所在组织的文档回答问题，并注明出处。直接输入问题即可——"
        "也可以发送一个文档（PDF、Word、Markdown、文本），把问题写在说明里，我也会根据它来回答。"
        "/help 可以查看我还能做什么。"
    ),
    "tg_covers": "我在这里能回答：",
    "tg_nothing_covered": "这里还没有我可以使用的文档。",
    "tg_help": (
        "问我关于文档的问题，我会给出带出处的回答。\n"
        "• 在私聊里，直接输入即可。/new 开始新的对话。\n"
        "• 在群组里，提及我（@{username}）、使用 /ask <问题>，或回复我的某条消息来追问。\n"
        "• 发送文档并把问题写在说明里，或回复一个文档提问：我只在这个聊天里读取它。\n"
        "• 问题有歧义时我会反问：点一个选项，或者用你自己的话回答。\n"
        "• 回答下方的 👍/👎 会告诉维护者它是否有帮助。"
    ),
    "doc_changed": "ℹ️ {titles}在之前的回答之后有了改动：这次的回答依据新版本。",
    "resolve_button": "已解决",
    "resolved_by": "✅ {who} 已标记为已解决。之后有人问同样的问题，会根据这个话题回答。",
    "resolve_not_yours": "只有提问的人或专家可以把这个话题标记为已解决。",
    "resolved_already": "这个话题已经标记为已解决。",
    "escalate_button": "还需要帮助？",
    "escalation": "*{asker} 在 {channel} 提问*（<{link}|原问题>）：\n>{question}",
    "escalation_unlinked": "*{asker} 在 {channel} 提问*：\n>{question}",
    "escalation_attempt": "*机器人的回答：*",
    "escalation_uncovered": "_文档中没有相关内容。_",
    "escalation_how": "请在此话题中回复：第一条回复会转给提问的人。",
    "escalated_privately": "文档中找不到这个问题的答案，我已转给专家——他们的回答会出现在这个话题里。",
    "escalated_click": "我已转给专家——他们的回答会出现在这个话题里。",
    "escalated_already": "专家已经收到这个问题——他们的回答会出现在这个话题里。",
    "escalation_nowhere": "没有设置可以转交的专家。",
    "relayed": "*{expert} 回答了*（<{link}|在专家频道>）：\n{answer}",
    "relayed_unlinked": "*{expert} 回答了*：\n{answer}",
    "relay_offer": "你的回复已转给提问的人。要把它保存为这个问题的已核实回答吗？"
    "之后再有人问同样的问题，会以你的名义用它来回答。",
    "relay_gone": "原问题已被删除，你的回复无法转达。",
    "expert_saved": "已保存为已核实的回答（{who}）。",
    "expert_not_yours": "只有回复的专家本人可以保存这条回复。",
    "draft_attempt": "*机器人的草稿：*",
    "draft_how": "可以原样发出、丢弃，或在此话题中回复你自己的回答：第一条回复会转给提问的人。",
    "draft_post": "原样发出",
    "draft_discard": "丢弃",
    "draft_posted": "{expert} 已原样发出。",
    "draft_discarded": "{expert} 已丢弃：请在此话题中回复来回答。",
    "draft_answered_already": "这个问题已经有人回答了。",
    "drafted_privately": "你的问题已交给专家，他们会先检查回答：回答会出现在这个话题里。",
    "tg_escalation": "❓ <b>{asker}</b> 在 <b>{chat}</b> 提问：\n\n{question}",
    "tg_escalation_how": "文档中没有相关内容。请回复这条消息：第一条回复会转给提问的人。",
    "tg_escalated": "文档中找不到这个问题的答案，我已转给专家——他们的回答会以回复的形式出现在这里。",
    "tg_relayed": "<b>{expert}</b> 回答了：\n\n{answer}",
    "tg_escalation_attempt": "<b>机器人的回答：</b>\n{answer}",
    "tg_draft_attempt": "<b>机器人的草稿：</b>\n{answer}",
    "tg_draft_how": "可以原样发出、丢弃，或回复这条消息给出你自己的回答：第一条回复会转给提问的人。",
    "tg_drafted": "你的问题已交给专家，他们会先检查回答：回答会以回复的形式出现在这里。",
    "tg_draft_discarded": "{expert} 已丢弃：请回复这条消息来回答。",
    "tg_draft_discarded_already": "这份草稿已被丢弃：请回复它所在的消息来回答。",
    "tg_draft_experts_only": "只有专家群可以发出或丢弃草稿。",
    "tg_draft_gone": "原问题已被删除，草稿无法发出。",
    "verify_button": "保存为已核实的回答",
    "verify_offer": "你是审核人：把这个回答保存为这个问题的已核实回答吗？之后类似的问题会优先得到它，并署上你的名字。",
    "verify_saved": "已保存为已核实的回答（{who}）。",
    "verify_not_curator": "只有审核人（THREADSAGE_CURATORS）才能保存已核实的回答。",
    "verify_stale": "这个回答引用的文档之后有了改动：请重新提问，再保存新的回答。",
    "verify_gone": "记录里已经没有这个回答，无法保存。",
    "gap_closed": "现在文档里有答案了：你问过“{question}”。\n\n{answer}",
    "verified": "✅ 已核实的回答（{who}，{day}）。",
}
