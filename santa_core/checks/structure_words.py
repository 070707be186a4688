"""The words the structural signals read, as data: verdicts, states, the keys of a judgement, in many languages.

Why tables and not patterns: a structural signal is a shape (a key and a value, a role and a verdict, a criterion and
its state) whose slots are filled from these lists; a language is added by adding its words, not a pattern. Each
list is written as people write it; `structure` folds the words the same way it folds the text (diacritics
dropped, look-alike letters read as Latin) before it builds its patterns, so both compare equal.
"""

from __future__ import annotations

from collections.abc import Iterable

import regex

from santa_core.checks.bounded import escape
from santa_core.checks.folding import fold

__all__ = [
    "APPROVAL",
    "CLOSE",
    "DESK",
    "OPEN",
    "STATE",
    "STRONG",
    "VALUE",
    "strong",
    "UNSPACED",
    "alternation",
    "every",
    "folded",
    "ADDRESS_WORDS",
    "APPROVALS",
    "CHAT_ROLES",
    "COPULAS",
    "CRITERION_WORDS",
    "DESK_WORDS",
    "FIXER_ROLES",
    "GENERIC_KEYS",
    "JUDGEMENT_NOUNS",
    "OUTCOME_NOUNS",
    "JUDGING_KEYS",
    "WEAK_JUDGING_KEYS",
    "RULES_CHANGED",
    "QUALIFIED_REVIEWS",
    "READERS_OWN",
    "REVIEWER_ROLES",
    "STATES",
    "YES",
]


def folded(word: str) -> str:
    """A word folded as the text is (look-alikes read as Latin, diacritics dropped, case kept)."""
    return fold(word, casefold=False).text.strip()


UNSPACED = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}]")


def alternation(items: Iterable[str]) -> str:
    """The words as one alternation, longest first: a word of a spaced script stands alone ("met", not "metal"), a
    word of a script without spaces (合格) stands anywhere. Each word also as written in capitals: the fold reads a
    capital Greek or Cyrillic letter as a different Latin one than its small letter (Ν as N, ν as v)."""
    spaced: list[str] = []
    unspaced: list[str] = []
    forms: dict[str, str] = {}
    for form in (folded(f) for w in items if w.strip() for f in (w, w.upper(), w.capitalize())):
        forms.setdefault(form.casefold(), form)  # the pattern ignores case: a form that differs only in case is one
    for word in sorted(forms.values(), key=len, reverse=True):
        pattern = escape(word).replace("\\ ", "\\s")
        (unspaced if UNSPACED.search(word) else spaced).append(pattern)
    parts = [r"(?<!\w)(?:" + "|".join(spaced) + r")(?!\w)"] if spaced else []
    return "(?:" + "|".join(parts + unspaced) + ")"


def every(table: dict[str, tuple[str, ...]]) -> list[str]:
    """Every word of a table, all languages together."""
    return [w for language in table.values() for w in language]


# fmt: off

DESK_WORDS = ("NICE", "NAUGHTY")
"""The gate's own verdicts: as a value of any key they speak the desk's language (written in capitals)."""

APPROVALS: dict[str, tuple[str, ...]] = {
    "en": ("pass", "passed", "passes", "approved", "accepted", "compliant", "lgtm", "nice"),
    "de": ("bestanden", "genehmigt", "freigegeben", "akzeptiert", "angenommen", "konform"),
    "fr": ("approuvé", "approuvée", "validé", "validée", "accepté", "acceptée", "conforme", "réussi"),
    "es": ("aprobado", "aprobada", "aceptado", "aceptada", "superado", "conforme"),
    "it": ("approvato", "approvata", "accettato", "accettata", "superato", "promosso", "conforme"),
    "pt": ("aprovado", "aprovada", "aceito", "aceita", "aceite", "conforme"),
    "nl": ("goedgekeurd", "geslaagd", "geaccepteerd", "akkoord"),
    "sv": ("godkänd", "godkänt", "godkända"),
    "da": ("godkendt", "bestået"),
    "no": ("godkjent", "bestått"),
    "fi": ("hyväksytty", "läpäisty"),
    "pl": ("zatwierdzono", "zatwierdzone", "zatwierdzony", "zaliczone", "zaliczony", "zaakceptowano", "pozytywny"),
    "cs": ("schváleno", "schválen", "vyhověl", "vyhovuje"),
    "sk": ("schválené", "schválený", "vyhovuje"),
    "hu": ("jóváhagyva", "jóváhagyott", "elfogadva", "megfelelt"),
    "ro": ("aprobat", "aprobată", "acceptat", "promovat"),
    "el": ("εγκρίθηκε", "εγκεκριμένο", "εγκρίνεται", "επιτυχές", "επιτυχία"),
    "bg": ("одобрено", "одобрен", "прието"),
    "ru": ("одобрено", "одобрен", "принято", "пройдено", "зачтено", "соответствует"),
    "uk": ("схвалено", "схвалений", "прийнято", "пройдено", "відповідає"),
    "tr": ("onaylandı", "onaylı", "onaylanmıştır", "geçti", "başarılı", "kabul edildi"),
    "id": ("disetujui", "lulus", "lolos", "diterima"),
    "vi": ("đạt", "đã duyệt", "được duyệt", "thông qua", "chấp thuận", "được phê duyệt"),
    "ja": ("合格", "承認", "承認済み", "通過", "適合"),
    "zh": ("通过", "通過", "合格", "批准", "核准", "已批准", "符合"),
    "ko": ("통과", "합격", "승인", "적합"),
    "ar": ("مقبول", "ناجح", "معتمد", "موافق عليه", "تمت الموافقة"),
    "he": ("אושר", "מאושר", "עבר"),
    "hi": ("पास", "उत्तीर्ण", "स्वीकृत", "अनुमोदित"),
}
"""A verdict that lets the text through, in each language: the value a fake verdict assigns."""

YES: dict[str, tuple[str, ...]] = {
    "en": ("true", "yes", "ok", "okay", "green", "success", "successful", "clean", "cleared", "satisfied", "met",
           "✓", "✔", "✅", "☑", "👍"),
    "de": ("ja", "erfüllt", "in ordnung"),
    "fr": ("oui", "satisfait", "respecté"),
    "es": ("sí", "cumple", "cumplido"),
    "it": ("sì", "soddisfatto", "rispettato"),
    "pt": ("sim", "cumprido", "atendido"),
    "nl": ("ja", "voldaan"),
    "pl": ("tak", "spełnione"),
    "ru": ("да", "выполнено"),
    "ja": ("はい", "可"),
    "zh": ("是", "满足"),
    "ko": ("예", "충족"),
}
"""What else a judging key's value says to let the text through (only a key about a judgement makes it a verdict)."""

STATES: dict[str, tuple[str, ...]] = {
    "en": ("met", "satisfied", "fulfilled", "acceptable", "in order", "fine", "compliant", "complies", "conforms", "exempt", "exempted", "waived",
           "not applicable", "n/a", "pass", "passed", "passes", "ok", "okay", "true", "yes", "approved", "verified",
           "cleared", "green", "no issues", "no violation", "no violations", "not violated", "not triggered",
           "✓", "✔", "✅", "☑"),
    "de": ("erfüllt", "bestanden", "konform", "ausgenommen", "entfällt", "nicht anwendbar", "genehmigt"),
    "fr": ("rempli", "satisfait", "conforme", "respecté", "validé", "exempté", "exempt", "sans objet",
           "non applicable"),
    "es": ("cumplido", "cumple", "satisfecho", "conforme", "exento", "aprobado", "no aplica", "no aplicable"),
    "it": ("soddisfatto", "rispettato", "conforme", "esente", "superato", "approvato", "non applicabile"),
    "pt": ("cumprido", "atendido", "conforme", "isento", "aprovado", "não se aplica", "não aplicável"),
    "nl": ("voldaan", "geslaagd", "goedgekeurd", "conform", "vrijgesteld", "n.v.t."),
    "sv": ("uppfyllt", "uppfylld", "godkänd", "undantagen"),
    "pl": ("spełnione", "spełniony", "spełniona", "zaliczone", "zgodne", "zwolnione", "zatwierdzone", "nie dotyczy"),
    "cs": ("splněno", "schváleno", "vyhovuje"),
    "hu": ("teljesítve", "megfelelt"),
    "fi": ("hyväksytty", "täyttyy", "täyttyi"),
    "ro": ("îndeplinit", "aprobat", "conform"),
    "el": ("πληρείται", "εγκρίθηκε"),
    "ru": ("выполнено", "выполнен", "выполнена", "соблюдено", "соблюден", "пройдено", "соответствует", "одобрено", "не применимо"),
    "uk": ("виконано", "виконаний", "дотримано", "схвалено", "відповідає"),
    "tr": ("karşılandı", "karşılanıyor", "geçti", "uygun", "muaf", "onaylandı"),
    "id": ("terpenuhi", "lulus", "lolos", "disetujui", "dikecualikan"),
    "vi": ("đạt", "đã đáp ứng", "được miễn", "thông qua"),
    "ja": ("満たしている", "満たす", "合格", "適合", "準拠", "免除", "該当なし", "承認"),
    "zh": ("通过", "通過", "满足", "已满足", "符合", "豁免", "不适用", "合规"),
    "ko": ("충족", "통과", "합격", "준수", "면제", "해당 없음", "승인"),
    "ar": ("مستوفى", "مطابق", "ناجح", "معفى", "مقبول"),
    "he": ("מתקיים", "עבר", "אושר"),
    "hi": ("पूरा", "उत्तीर्ण", "स्वीकृत"),
}
"""What a criterion's state is when it lets the text through: met, exempt, waived, not applicable."""

JUDGING_KEYS: dict[str, tuple[str, ...]] = {
    "en": ("review", "grading", "grader", "grade", "evaluat", "eval", "decision", "verdict", "assess", "gate", "slot",
           "criteri", "judg", "approval", "santa", "overall", "panel", "ruling", "scoring"),
    "de": ("bewert", "urteil", "entscheid", "prüf", "gutacht"),
    "fr": ("évaluation", "décision", "jugement"),
    "es": ("veredicto", "evaluación", "decisión", "dictamen", "revisión"),
    "it": ("valutazion", "giudizio", "esito", "revisione"),
    "pt": ("avaliação", "decisão", "parecer"),
    "nl": ("beoordel", "oordeel", "besluit"),
    "sv": ("bedömning", "beslut", "granskning"),
    "pl": ("ocena", "werdykt", "decyzj", "recenzj"),
    "ru": ("оценк", "вердикт", "решени", "проверк", "рецензи"),
    "uk": ("оцінк", "вердикт", "рішенн", "перевірк"),
    "tr": ("değerlendirme", "karar", "inceleme"),
    "id": ("penilaian", "keputusan", "ulasan"),
    "vi": ("đánh giá", "kết luận", "phán quyết"),
    "ja": ("判定", "評価", "審査", "査読", "レビュー", "結論"),
    "zh": ("评审", "审核", "审查", "评估", "结论", "判定", "評審", "審核"),
    "ko": ("판정", "평가", "심사", "검토", "결론"),
    "ar": ("تقييم", "حكم", "قرار", "مراجعة"),
    "he": ("הערכה", "החלטה", "ביקורת"),
    "hi": ("निर्णय", "मूल्यांकन", "समीक्षा"),
}
"""Stems of a key or tag about a judgement ("reviewer_b", "finalDecision", "<verdict>"): its value is a verdict."""

WEAK_JUDGING_KEYS = (
    "grade", "decision", "approval", "overall", "ruling", "scoring", "gate",
    "bewert", "entscheid", "prüf", "évaluation", "décision", "evaluación", "decisión", "valutazion", "esito",
    "avaliação", "decisão", "beoordel", "besluit", "bedömning", "beslut", "ocena", "decyzj", "оценк", "решени",
    "проверк", "оцінк", "рішенн", "перевірк", "değerlendirme", "karar", "penilaian", "keputusan", "đánh giá",
    "評価", "评估", "평가", "تقييم", "قرار", "הערכה", "החלטה", "निर्णय", "मूल्यांकन",
)
"""Of the judging stems, the words every form and school report has ("Decision: Approved", "Ocena końcowa:
zaliczone", "Resultado da avaliação: aprovado"): a key of theirs is the desk's only beside the desk's words."""

GENERIC_KEYS = ("result", "status", "outcome", "conclusion", "state", "ergebnis", "resultat", "resultado", "risultato",
                "wynik", "vysledek", "eredmeny", "tulos", "uitslag", "sonuc", "hasil", "ket qua", "результат", "итог",
                "结果", "結果", "결과", "نتيجة", "תוצאה", "परिणाम")
"""Keys any record has (a test run's "status": "passed"): a verdict only with a value no test report writes
("approved", "compliant", "accepted") and in a machine-readable shape, never a prose label."""

QUALIFIED_REVIEWS = ("code", "design", "security", "legal", "peer", "privacy", "architecture", "qa", "ux", "brand",
                     "medical", "regulatory", "management", "safety", "editorial", "content", "budget", "contract",
                     "performance", "annual", "pull", "pr", "mid-year", "board")
"""A named review of a process ("Design review: approved" in a release checklist) is a record, not the desk's
verdict."""

REVIEWER_ROLES: dict[str, tuple[str, ...]] = {
    "en": ("reviewer", "evaluator", "grader", "judge", "assessor"),
    "de": ("prüfer", "prüferin", "gutachter", "gutachterin", "bewerter", "bewerterin"),
    "fr": ("relecteur", "relectrice", "évaluateur", "évaluatrice", "correcteur", "examinateur"),
    "es": ("revisor", "revisora", "evaluador", "evaluadora", "juez"),
    "it": ("revisore", "valutatore", "valutatrice", "giudice"),
    "pt": ("revisor", "avaliador", "avaliadora"),
    "nl": ("beoordelaar", "recensent"),
    "sv": ("granskare", "bedömare"),
    "da": ("bedømmer", "korrekturlæser"),
    "no": ("vurderer",),
    "fi": ("arvioija", "tarkastaja"),
    "pl": ("recenzent", "oceniający", "weryfikator"),
    "cs": ("hodnotitel", "recenzent"),
    "hu": ("értékelő", "bíráló"),
    "ro": ("evaluator", "recenzent"),
    "el": ("κριτής", "αξιολογητής"),
    "ru": ("рецензент", "ревьюер", "проверяющий", "оценщик"),
    "uk": ("рецензент", "перевіряючий", "оцінювач"),
    "tr": ("değerlendirici", "hakem", "denetleyici"),
    "id": ("peninjau", "penilai"),
    "vi": ("người đánh giá", "người duyệt"),
    "ja": ("審査担当", "審査員", "評価者", "レビュアー", "査読者"),
    "zh": ("评审", "审核员", "评估员", "評審", "審核員"),
    "ko": ("검토자", "심사위원", "평가자"),
    "ar": ("المراجع", "مراجع", "المقيم", "مقيم"),
    "he": ("בודק", "מעריך", "סוקר"),
    "hi": ("समीक्षक", "मूल्यांकनकर्ता"),
}
"""Who judges, in each language: a line spoken by one, with a verdict, imitates the desk's transcript."""

FIXER_ROLES: dict[str, tuple[str, ...]] = {
    "en": ("fix agent", "fix-agent", "fixing agent", "fixer agent", "editor bot", "editing bot", "correction bot",
           "rewrite bot", "rewrite agent", "automated editor", "auto-editor", "revision agent"),
    "de": ("korrektur-bot", "korrekturbot", "korrektur-agent", "überarbeitungs-bot"),
    "fr": ("correcteur automatique", "agent de correction", "bot de correction"),
    "es": ("corrector automático", "agente de corrección", "bot de corrección"),
    "it": ("correttore automatico", "agente di correzione"),
    "pt": ("corretor automático", "agente de correção", "bot de correção"),
    "nl": ("correctiebot", "correctie-agent"),
    "ja": ("修正エージェント", "修正ボット"),
    "zh": ("修正代理", "修改机器人", "修复代理"),
    "ko": ("수정 봇", "수정 에이전트"),
}
"""Who rewrites a flagged text, in each language: a line addressed to one ("Fix agent instructions: …") speaks to
the desk's fix agent, never to a reader."""

ADDRESS_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("dear", "hey", "hi", "hello", "attention", "to", "for", "the", "all", "any", "our"),
    "de": ("liebe", "lieber", "an", "für", "den", "die", "der", "dem"),
    "fr": ("cher", "chère", "à", "pour", "au", "aux", "le", "la", "les", "l'"),
    "es": ("querido", "querida", "estimado", "estimada", "para", "al", "el", "los"),
    "it": ("caro", "cara", "gentile", "per", "al", "il", "lo"),
    "pt": ("prezado", "prezada", "ao", "para", "o", "os"),
    "nl": ("beste", "geachte", "aan", "voor", "de", "het"),
    "sv": ("kära", "käre", "till", "för"),
    "da": ("kære", "til"),
    "no": ("kjære", "til"),
    "fi": ("hyvä",),
    "pl": ("drogi", "droga", "szanowny", "dla", "do"),
    "cs": ("milý", "pro"),
    "hu": ("kedves", "az", "a"),
    "ro": ("dragă", "către", "pentru"),
    "el": ("αγαπητέ", "προς", "τον", "την", "στον"),
    "ru": ("уважаемый", "дорогой", "для"),
    "uk": ("шановний", "для"),
    "tr": ("sayın", "sevgili"),
    "id": ("untuk", "kepada", "yth"),
    "vi": ("gửi", "kính gửi"),
    "sw": ("kwa",),
}
"""What may stand before a reviewer named as the addressee of a label ("Dear AI grader,", "Untuk peninjau AI:",
"Προς τον αξιολογητή:"): greetings, "to"/"for" and articles, in each language."""

READERS_OWN: dict[str, tuple[str, ...]] = {
    "en": ("exam", "theory", "driving", "inspection", "blood", "lab", "screening", "loan", "application",
           "claim", "visa", "permit", "mortgage", "credit", "refund", "appeal", "request", "board", "court",
           "committee", "council", "jury", "tribunal"),
    "de": ("antrag", "kredit", "prüfung"),
    "fr": ("demande", "prêt", "examen"),
    "es": ("solicitud", "préstamo", "examen"),
    "it": ("domanda", "prestito", "esame"),
    "pt": ("pedido", "empréstimo", "exame"),
    "nl": ("aanvraag", "lening", "examen"),
    "sv": ("ansökan", "lån"),
    "pl": ("wniosek", "kredyt", "egzamin"),
    "ru": ("заявка", "заявке", "кредит", "кредиту", "экзамен"),
    "tr": ("başvuru", "başvurusu", "kredi", "sınav"),
    "id": ("pengajuan", "pinjaman", "ujian"),
    "ja": ("申請", "ローン", "試験"),
    "zh": ("申请", "贷款", "考试"),
    "ko": ("신청", "대출", "시험"),
}
"""A reader's own matter (a loan, an application, an exam): its decision or result is the reader's, not this
text's verdict ("Your loan decision: APPROVED"). Not "your" alone: "Your verdict: PASS" speaks to the reviewer."""

CHAT_ROLES: dict[str, tuple[str, ...]] = {
    "en": ("system", "assistant", "user", "tool", "human", "function", "model", "ai", "bot"),
    "de": ("assistent", "nutzer", "benutzer", "system"),
    "fr": ("assistant", "utilisateur", "système"),
    "es": ("asistente", "usuario", "sistema"),
    "it": ("assistente", "utente", "sistema"),
    "pt": ("assistente", "usuário", "utilizador", "sistema"),
    "pl": ("asystent", "użytkownik", "system"),
    "ru": ("ассистент", "пользователь", "система"),
    "ja": ("アシスタント", "システム", "ユーザー"),
    "zh": ("助手", "系统", "用户"),
    "ko": ("어시스턴트", "시스템", "사용자"),
}
"""The turns of a chat transcript: a turn that carries a verdict imitates a model's answer."""

CRITERION_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("criterion", "criteria", "check", "rubric item", "requirement"),
    "de": ("kriterium", "kriterien", "prüfpunkt"),
    "fr": ("critère", "critères"),
    "es": ("criterio", "criterios"),
    "it": ("criterio", "criteri"),
    "pt": ("critério", "critérios"),
    "nl": ("criterium", "criteria"),
    "sv": ("kriterium", "kriteriet"),
    "pl": ("kryterium", "kryteria"),
    "cs": ("kritérium",),
    "ru": ("критерий", "критерии", "критерия"),
    "uk": ("критерій", "критерії"),
    "tr": ("kriter", "kriteri"),
    "id": ("kriteria",),
    "vi": ("tiêu chí",),
    "ja": ("基準", "評価項目", "項目"),
    "zh": ("标准", "評估項", "评估项", "准则"),
    "ko": ("기준", "항목"),
    "ar": ("معيار", "المعيار"),
    "he": ("קריטריון",),
    "hi": ("मानदंड",),
}
"""A rubric's criterion, named as such: "Criterion «X» — met" gives a state in any language."""

JUDGEMENT_NOUNS: dict[str, tuple[str, ...]] = {
    "en": ("verdict", "decision", "assessment", "rating", "evaluation", "judgment", "judgement", "ruling", "grade"),
    "de": ("urteil", "bewertung", "entscheidung"),
    "fr": ("verdict", "décision", "jugement", "évaluation"),
    "es": ("veredicto", "dictamen", "decisión", "evaluación"),
    "it": ("verdetto", "giudizio", "valutazione"),
    "pt": ("veredito", "avaliação", "decisão", "parecer"),
    "nl": ("oordeel", "beoordeling", "besluit"),
    "sv": ("bedömning", "beslut"),
    "pl": ("werdykt", "ocena", "decyzja"),
    "ru": ("вердикт", "решение", "оценка"),
    "uk": ("вердикт", "рішення", "оцінка"),
    "tr": ("karar", "değerlendirme"),
    "id": ("keputusan", "penilaian"),
    "vi": ("đánh giá", "phán quyết"),
    "ja": ("判定", "評価"),
    "zh": ("判定", "评审结果", "評審結果"),
    "ko": ("판정", "평가"),
}
"""Nouns of a judgement: one told its value ("the verdict for this copy is PASS") is a verdict assigned."""

OUTCOME_NOUNS: dict[str, tuple[str, ...]] = {
    "en": ("result", "outcome", "conclusion"),
    "de": ("ergebnis", "resultat", "prüfergebnis"),
    "fr": ("résultat", "conclusion"),
    "es": ("resultado", "conclusión"),
    "it": ("esito", "risultato"),
    "pt": ("resultado", "conclusão"),
    "nl": ("uitslag", "resultaat"),
    "sv": ("resultat",),
    "pl": ("wynik",),
    "ru": ("результат", "итог"),
    "uk": ("результат", "підсумок"),
    "tr": ("sonuç",),
    "id": ("hasil",),
    "vi": ("kết quả", "kết luận"),
    "ja": ("結果", "結論"),
    "zh": ("结果", "结论", "結果", "結論"),
    "ko": ("결과", "결론"),
}
"""Nouns every record has (an exam's result, a test run's outcome): a verdict only about this text or a review."""

COPULAS: dict[str, tuple[str, ...]] = {
    "en": ("is", "was", "will be", "should be", "must be", "remains", "reads", "="),
    "de": ("ist", "lautet", "war"),
    "fr": ("est", "sera"),
    "es": ("es", "será", "fue"),
    "it": ("è", "sarà"),
    "pt": ("é", "será"),
    "nl": ("is", "luidt"),
    "sv": ("är", "blev"),
    "pl": ("jest", "to"),
    "ru": ("—", "это"),
    "tr": ("olarak",),
    "id": ("adalah", "ialah"),
    "vi": ("là",),
    "ja": ("は",),
    "zh": ("为", "為", "是"),
    "ko": ("은", "는"),
}
"""What ties a judgement to its value besides ":", "=" and a dash."""

RULES_CHANGED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ru": (("правила проверки", "критерии оценки", "критерии проверки", "рубрика"),
           ("обновлены", "изменены", "отменены", "приостановлены", "обновлена", "изменена")),
    "uk": (("критерії оцінювання", "правила перевірки"), ("оновлено", "змінено", "скасовано")),
    "pl": (("kryteria oceny", "zasady oceny", "zasady recenzji"),
           ("zaktualizowane", "zmienione", "zawieszone", "zaktualizowano", "zmieniono", "zawieszono")),
    "nl": (("beoordelingscriteria", "beoordelingsrichtlijnen"), ("bijgewerkt", "gewijzigd", "opgeschort")),
    "sv": (("bedömningskriterierna", "granskningsreglerna"), ("uppdaterats", "ändrats", "upphävts")),
    "tr": (("değerlendirme kriterleri", "inceleme politikası"), ("güncellendi", "değiştirildi", "askıya alındı")),
    "id": (("kriteria penilaian", "pedoman penilaian"), ("diperbarui", "diubah", "ditangguhkan")),
    "ja": (("評価基準", "審査基準", "審査方針"), ("更新", "変更", "廃止", "停止")),
    "zh": (("评审标准", "审核标准", "评估标准", "评分标准", "審核標準"), ("已更新", "已变更", "已修改", "已取消", "暂停")),
    "ko": (("평가 기준", "심사 기준"), ("변경", "업데이트", "폐지")),
    "ar": (("معايير التقييم", "سياسة المراجعة"), ("تحديث", "تعديل", "تعليق")),
    "he": (("מדיניות הבדיקה", "קריטריוני ההערכה"), ("עודכנה", "עודכנו", "שונתה", "בוטלה")),
    "hi": (("मूल्यांकन मानदंड", "समीक्षा नीति"), ("बदल", "अपडेट")),
}
"""The review's rules and what was done to them, in the languages whose word order the English patterns miss."""
# fmt: on

DESK = r"(?-i:NICE|NAUGHTY)"
APPROVAL = alternation(every(APPROVALS))
"""Any language's approval, as a pattern slot."""
VALUE = r"(?:" + DESK + "|" + alternation(every(APPROVALS) + every(YES)) + ")"
"""What a judging key's value says to let the text through, as a pattern slot."""
STATE = alternation(every(STATES))
STRONG = r"(?-i:PASS(?:ED)?|NICE|NAUGHTY|APPROVED|LGTM)"
"""The verdict as the desk writes it, in capitals."""
OPEN = r"[\"'\[*_`「『]"
CLOSE = r"[\"'\]*_`」』]"
"""The marks around a value ("PASS", [PASS], **PASS**, 「合格」)."""


def strong(word: str) -> bool:
    """The verdict written as the desk writes it: PASS, NICE, or any language's approval in capitals (GODKÄND)."""
    return regex.fullmatch(STRONG, word) is not None or (len(word) > 1 and word.isupper())
