#!/usr/bin/env python3
"""Deterministic benchmark data for the scripts in this folder.

  generate.py clips N OUT   itsypad export OUT/itsypad-N.json, clipman history
                            OUT/clipman-N.json (same texts, oldest first), ids
                            OUT/ids-N.txt and the baseline OUT/lines-N.jsonl (one
                            {"id","text"} object a line)
  generate.py tabs N OUT    itsypad export OUT/tabs-N.json and ids OUT/tab-ids-N.txt
  generate.py script-clips SCRIPT N OUT
                            clips in one script (cyrillic, cjk, emoji, mixed):
                            OUT/itsypad-SCRIPT-N.json and OUT/lines-SCRIPT-N.jsonl

With IMAGES=1 in the environment, every tenth clip of `clips` is a PNG image of
1-4 KiB instead (in the export as type and base64 data; in the baseline lines as
{"id","type","size"}), as a history that records screenshots holds.

Clip texts are distinct, 20-200 characters: prose, URLs, shell commands,
code, multi-line snippets, some non-ASCII. Script clips are
the same kinds of text in Russian, Chinese and Japanese, with emoji (skin
tones, ZWJ sequences, flags, keycaps), or all of them mixed with accented
Latin and Greek. Tabs are notes of 1-25 lines,
about 50-2,000 bytes, named "note I", "заметка I" or "笔记 I" (I modulo 3), the
others with a line of their name's script.
"""
import base64
import json
import os
import random
import struct
import sys
import time
import uuid

WORDS = ("the a of to and in is for on with as at by from this that meeting notes todo fix bug "
         "release build deploy server client token cache index query result error warning "
         "coffee lunch tomorrow review branch merge commit draft invoice address phone "
         "café naïve résumé über straße").split()
HOSTS = ["github.com", "example.org", "docs.swift.org", "news.ycombinator.com", "en.wikipedia.org"]
COMMANDS = ["git log --oneline -n {n}", "kubectl get pods -n {w}", "ssh {w}@10.0.{n}.{m}",
            "docker run --rm -it {w}:{n}", "grep -rn '{w}' src/", "curl -s https://{h}/api/{w}?page={n}",
            "find . -name '*.{w}' -mtime -{n}", "rsync -av {w}/ backup/{w}-{n}/"]
CODE = ["let {w} = try store.{w}({n})", "func {w}(_ x: Int) -> Int {{ x * {n} }}",
        "if ({w} > {n}) {{ return {m}; }}", "SELECT * FROM {w} WHERE id = {n} LIMIT {m};",
        "{w} = [x for x in range({n}) if x % {m}]", "console.log('{w}', {n}, {m});"]


def sentence(rng, k):
    s = " ".join(rng.choice(WORDS) for _ in range(k))
    return s[0].upper() + s[1:] + rng.choice([".", "!", "?", ""])


def fill(rng, template):
    return template.format(w=rng.choice(WORDS[20:]), n=rng.randint(1, 999), m=rng.randint(1, 255), h=rng.choice(HOSTS))


def clip_text(rng):
    kind = rng.random()
    if kind < 0.40:
        t = sentence(rng, rng.randint(4, 30))
    elif kind < 0.55:
        t = "https://{}/{}/{}?id={}".format(rng.choice(HOSTS), rng.choice(WORDS[20:]), rng.choice(WORDS[20:]), rng.randint(1, 10**9))
    elif kind < 0.70:
        t = fill(rng, rng.choice(COMMANDS))
    elif kind < 0.85:
        t = fill(rng, rng.choice(CODE))
    else:
        t = "\n".join(fill(rng, rng.choice(CODE + COMMANDS)) for _ in range(rng.randint(2, 4)))
    if len(t) < 20:
        t += " " + sentence(rng, 6)
    return t[:200].strip()


def png(rng):
    """A PNG's signature and IHDR chunk, then noise: what listing reads of it is its size and pixels."""
    width, height = rng.randint(16, 4000), rng.randint(16, 3000)
    ihdr = struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0) + b"\0\0\0\0"
    return b"\x89PNG\r\n\x1a\n" + ihdr + rng.randbytes(rng.randint(1024, 4096))


def clips(n, out):
    rng = random.Random(20260101 + n)
    images = os.environ.get("IMAGES") == "1"
    texts, seen = [], set()
    while len(texts) < n:
        t = clip_text(rng)
        if len(t) >= 20 and t not in seen:
            seen.add(t)
            texts.append(t)
    base = 1767225600  # 2026-01-01T00:00:00Z; one entry a second, oldest first
    ids, items, lines = [], [], []
    for i, t in enumerate(texts):
        cid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        ids.append(cid)
        stamp = "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.000Z".format(*time.gmtime(base + i)[:6])
        item = {"id": cid, "text": t, "timestamp": stamp, "pinned": False, "localOnly": False}
        line = {"id": cid, "text": t}
        if images and i % 10 == 9:
            data = png(rng)
            item.update(text=None, type="image/png", size=len(data), data=base64.b64encode(data).decode())
            line = {"id": cid, "type": "image/png", "size": len(data)}
        items.append(item)
        lines.append(line)
    doc = {"format": "itsypad-export", "version": 1, "tabs": [], "clips": items, "settings": []}
    with open(f"{out}/itsypad-{n}.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    with open(f"{out}/clipman-{n}.json", "w", encoding="utf-8") as f:
        json.dump(texts, f, ensure_ascii=False)
    with open(f"{out}/ids-{n}.txt", "w") as f:
        f.write("\n".join(ids) + "\n")
    with open(f"{out}/lines-{n}.jsonl", "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


CYRILLIC = ("привет мир встреча заметки сделать исправить ошибка выпуск сборка сервер клиент ключ кэш индекс "
            "запрос результат предупреждение кофе обед завтра обзор ветка слияние коммит черновик счёт адрес "
            "телефон Москва ёлка щука объявление").split()
CHINESE = "会议 笔记 待办 修复 错误 发布 构建 部署 服务器 客户端 令牌 缓存 索引 查询 结果 警告 咖啡 午餐 明天 审查 分支 合并 提交 草稿 发票 地址 电话".split()
JAPANESE = ("会議 メモ やること 修正 バグ リリース ビルド デプロイ サーバー クライアント トークン キャッシュ 検索 結果 警告 "
            "コーヒー 昼食 明日 レビュー ブランチ マージ コミット 下書き 請求書 住所 電話 こんにちは ありがとう").split()
EMOJI = ["🎉", "👍", "👍🏽", "❤️", "🔥", "😀", "😂", "🙏", "👩‍💻", "🏃‍♀️", "🇫🇷", "🇯🇵", "✅", "🚀", "1️⃣", "👨‍👩‍👧", "🤔", "💯"]
GREEK = "καλημέρα κόσμε ΟΔΟΣ σοφία Ελλάδα".split()


def script_text(rng, script):
    """One clip in `script`: words of it between spaces, a number now and then, 20-200 characters."""
    if script == "mixed":
        script = rng.choice(["cyrillic", "cjk", "emoji", "latin"])
        words = {"cyrillic": CYRILLIC + WORDS[:10], "cjk": CHINESE + JAPANESE + WORDS[:5], "emoji": EMOJI + WORDS,
                 "latin": WORDS[-5:] + GREEK + WORDS}[script] + ["naïve café", "Straße"]
    else:
        words = {"cyrillic": CYRILLIC, "cjk": rng.choice([CHINESE, JAPANESE]), "emoji": EMOJI + WORDS}[script]
    joiner = "" if words[0] in CHINESE or words[0] in JAPANESE else " "
    parts = []
    while sum(len(p) for p in parts) < rng.randint(20, 150):
        part = rng.choice(words)
        if rng.random() < 0.1:
            part += " " + str(rng.randint(1, 999))
        parts.append(part)
    t = joiner.join(parts)
    t = t[0].upper() + t[1:] + rng.choice([".", "!", "?", "", "。" if joiner == "" else ""])
    if rng.random() < 0.1:
        t += "\n" + joiner.join(rng.choice(words) for _ in range(5))
    return t[:200].strip()


def script_clips(script, n, out):
    rng = random.Random(20260301 + n + len(script))
    texts, seen = [], set()
    while len(texts) < n:
        t = script_text(rng, script)
        if len(t) >= 10 and t not in seen:
            seen.add(t)
            texts.append(t)
    base = 1767225600
    ids, items = [], []
    for i, t in enumerate(texts):
        cid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        ids.append(cid)
        stamp = "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.000Z".format(*time.gmtime(base + i)[:6])
        items.append({"id": cid, "text": t, "timestamp": stamp, "pinned": False, "localOnly": False})
    doc = {"format": "itsypad-export", "version": 1, "tabs": [], "clips": items, "settings": []}
    with open(f"{out}/itsypad-{script}-{n}.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    with open(f"{out}/lines-{script}-{n}.jsonl", "w", encoding="utf-8") as f:
        for cid, t in zip(ids, texts):
            f.write(json.dumps({"id": cid, "text": t}, ensure_ascii=False, separators=(",", ":")) + "\n")


def tabs(n, out):
    rng = random.Random(20260201 + n)
    hosts = HOSTS[:3] + HOSTS[4:]
    commands = [COMMANDS[i] for i in (0, 1, 2, 5, 7)]
    code = [CODE[i] for i in (0, 1, 3, 4)]

    def line():
        kind = rng.random()
        if kind < 0.5:
            s = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 16)))
            return s[0].upper() + s[1:] + "."
        if kind < 0.6:
            return "https://{}/{}?id={}".format(rng.choice(hosts), rng.choice(WORDS[20:]), rng.randint(1, 10**9))
        t = rng.choice(commands if kind < 0.8 else code)
        return t.format(w=rng.choice(WORDS[20:]), n=rng.randint(1, 999), m=rng.randint(1, 255), h=rng.choice(hosts))

    items, ids = [], []
    for i in range(n):
        tid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        ids.append(tid)
        content = "\n".join(line() for _ in range(rng.randint(1, 25))) + f"\n#{i}"
        # A third of the names and some lines in Cyrillic, a third in Chinese.
        name = [f"note {i}", f"заметка {i}", f"笔记 {i}"][i % 3]
        if i % 3:
            content += "\n" + " ".join(rng.choice(CYRILLIC if i % 3 == 1 else CHINESE) for _ in range(8))
        items.append({"id": tid, "name": name, "content": content, "language": "plain",
                      "languageLocked": False, "lastModified": "2026-01-01T00:00:00.000Z"})
    doc = {"format": "itsypad-export", "version": 1, "tabs": items, "clips": [], "settings": []}
    with open(f"{out}/tabs-{n}.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    with open(f"{out}/tab-ids-{n}.txt", "w") as f:
        f.write("\n".join(ids) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "script-clips":
        script_clips(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        kind, count, directory = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        {"clips": clips, "tabs": tabs}[kind](count, directory)
