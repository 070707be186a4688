"""The words the structural signals read, as data: verdicts, states, the keys of a judgement, in many languages.

Why tables and not patterns: a structural signal is a shape (a key and a value, a role and a verdict, a criterion and
its state) whose slots are filled from these lists; a language is added by adding its words, not a pattern. Each
list is written as people write it; `structure` folds the words the same way it folds the text (diacritics
dropped, look-alike letters read as Latin) before it builds its patterns, so both compare equal.
"""

from __future__ import annotations

__all__ = ["APPROVALS", "DESK_WORDS", "GENERIC_KEYS", "JUDGING_KEYS", "QUALIFIED_REVIEWS", "STATES", "YES"]

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
    "el": ("εγκρίθηκε", "εγκεκριμένο", "εγκρίνεται"),
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
    "en": ("met", "satisfied", "fulfilled", "compliant", "complies", "conforms", "exempt", "exempted", "waived",
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
    "pl": ("spełnione", "spełniony", "zaliczone", "zgodne", "zwolnione", "zatwierdzone", "nie dotyczy"),
    "cs": ("splněno", "schváleno", "vyhovuje"),
    "hu": ("teljesítve", "megfelelt"),
    "fi": ("hyväksytty", "täyttyy", "täyttyi"),
    "ro": ("îndeplinit", "aprobat", "conform"),
    "el": ("πληρείται", "εγκρίθηκε"),
    "ru": ("выполнено", "соблюдено", "пройдено", "соответствует", "одобрено", "не применимо"),
    "uk": ("виконано", "дотримано", "схвалено", "відповідає"),
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

GENERIC_KEYS = ("result", "status", "outcome", "conclusion", "state")
"""Keys any record has (a test run's "status": "passed"): a verdict only with a value no test report writes
("approved", "compliant", "accepted") and in a machine-readable shape, never a prose label."""

QUALIFIED_REVIEWS = ("code", "design", "security", "legal", "peer", "privacy", "architecture", "qa", "ux", "brand",
                     "medical", "regulatory", "management", "safety", "editorial", "content", "budget", "contract",
                     "performance", "annual", "pull", "pr", "mid-year", "board")
"""A named review of a process ("Design review: approved" in a release checklist) is a record, not the desk's
verdict."""
