"""Text and language: counts, sentiment, keywords and the language of a text; translations, synonyms
and definitions.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context
from toolbench.mock_services.rapidapi.services.shared import N, S, api, bounded, p

POSITIVE = frozenset(
    [
        "good",
        "great",
        "excellent",
        "happy",
        "love",
        "wonderful",
        "amazing",
        "best",
        "fantastic",
        "nice",
        "pleased",
        "glad",
        "enjoy",
    ]
)

NEGATIVE = frozenset(
    [
        "bad",
        "terrible",
        "awful",
        "sad",
        "hate",
        "worst",
        "horrible",
        "poor",
        "angry",
        "disappointed",
        "broken",
        "slow",
        "boring",
    ]
)

STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "is",
        "are",
        "was",
        "were",
        "be",
        "it",
        "this",
        "that",
        "with",
        "as",
        "at",
        "by",
        "from",
    ]
)

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def text_service(style: int) -> list[Api]:
    def count(ctx: Context, a: dict[str, Any]) -> Any:
        text = a["text"]
        sentences = [s for s in re.split(r"[.!?]+", text) if s.strip()]
        return {"words": len(text.split()), "characters": len(text), "sentences": len(sentences)}

    def sentiment(ctx: Context, a: dict[str, Any]) -> Any:
        found = words_of(a["text"])
        score = sum(w in POSITIVE for w in found) - sum(w in NEGATIVE for w in found)
        label = "positive" if score > 0 else "negative" if score < 0 else "neutral"
        return {"score": score, "label": label, "words": len(found)}

    def keywords(ctx: Context, a: dict[str, Any]) -> Any:
        top = int(bounded(a.get("top", 3), 1, 20, "top"))
        counts = Counter(w for w in words_of(a["text"]) if w not in STOPWORDS and len(w) > 2)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return {"keywords": [{"word": w, "count": c} for w, c in ranked]}

    def language(ctx: Context, a: dict[str, Any]) -> Any:
        found = set(words_of(a["text"]))
        votes = {
            lang: sum(str(w[lang]).lower() in found for w in ctx.world.rows("words")) for lang in ("es", "fr", "de")
        }
        votes["en"] = sum(w["word"] in found for w in ctx.world.rows("words")) + len(found & STOPWORDS)
        best = max(sorted(votes), key=lambda lang: votes[lang])
        total = sum(votes.values())
        return {"language": best if total else "unknown", "confidence": round(votes[best] / total, 2) if total else 0.0}

    text = p("text", S, "the text", "What a wonderful day in the park.")
    return [
        api(
            "text.count",
            ("Word Count", "countWords", "count"),
            style,
            "POST",
            "/count",
            "Words, characters and sentences of a text.",
            count,
            (text,),
        ),
        api(
            "text.sentiment",
            ("Sentiment Analysis", "analyzeSentiment", "sentiment"),
            style,
            "POST",
            "/sentiment",
            "Whether a text reads positive, negative or neutral.",
            sentiment,
            (text,),
        ),
        api(
            "text.keywords",
            ("Extract Keywords", "getKeywords", "keywords"),
            style,
            "POST",
            "/keywords",
            "The most frequent content words of a text.",
            keywords,
            (text,),
            (p("top", N, "how many", 3),),
        ),
        api(
            "text.language",
            ("Detect Language", "detectLanguage", "detect"),
            style,
            "POST",
            "/detect",
            "The language of a text (en, es, fr or de).",
            language,
            (text,),
        ),
    ]


def dictionary_service(style: int) -> list[Api]:
    def entry(ctx: Context, word: str) -> dict[str, Any]:
        found = ctx.world.get("words", word.strip().lower())
        if found is None:
            raise ApiError(404, f"No entry for '{word[:80]}'")
        return found

    def translate(ctx: Context, a: dict[str, Any]) -> Any:
        found = entry(ctx, a["word"])
        return {"word": found["word"], "target": a["target"], "translation": found[a["target"]]}

    def synonyms(ctx: Context, a: dict[str, Any]) -> Any:
        found = entry(ctx, a["word"])
        return {"word": found["word"], "synonyms": found["synonyms"]}

    def define(ctx: Context, a: dict[str, Any]) -> Any:
        found = entry(ctx, a["word"])
        return {"word": found["word"], "part_of_speech": found["part_of_speech"], "definition": found["meaning"]}

    word = p("word", S, "an English word", "house")
    return [
        api(
            "dictionary.translate",
            ("Translate Word", "translateWord", "translate"),
            style,
            "GET",
            "/translate",
            "An English word in Spanish, French or German.",
            translate,
            (word, p("target", "ENUM", "es, fr or de", "es", ("es", "fr", "de"))),
        ),
        api(
            "dictionary.synonyms",
            ("Synonyms", "getSynonyms", "synonyms"),
            style,
            "GET",
            "/synonyms",
            "Words that mean the same.",
            synonyms,
            (word,),
        ),
        api(
            "dictionary.define",
            ("Define Word", "getDefinition", "define"),
            style,
            "GET",
            "/define",
            "A word's meaning and part of speech.",
            define,
            (word,),
        ),
    ]
