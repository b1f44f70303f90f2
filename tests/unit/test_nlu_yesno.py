"""yes_no: the answer must lead the message (rules in shared/nlu/yesno.py)."""

import pytest

from shared.nlu.yesno import split_yes_no, yes_no

YES = [
    "sim",
    "Sim",
    "s",
    "S",
    "ss",
    "siiim",
    "Simm!",
    "sim sim",
    "pode ser",
    "Pode ser!",
    "bora",
    "Bora!!",
    "claro",
    "claro que sim",
    "isso",
    "isso mesmo",
    "isso aí",
    "com certeza",
    "ctz",
    "ok",
    "OK",
    "okk",
    "beleza",
    "blz",
    "fechado",
    "fechou",
    "pode",
    "pode sim",
    "quero",
    "quero sim",
    "quero!",
    "tá bom",
    "ta bom",
    "tá",
    "certo",
    "perfeito",
    "combinado",
    "confirmo",
    "pode confirmar",
    "pode marcar",
    "uhum",
    "aham",
    "acho que sim",
    "por mim sim",
    "não tem problema",
    "sem problema",
    "👍",
    "👍🏽",
    "✅",
    "✔️",
    "👌",
    "oi! sim",
    "Opa, claro",
    "kkkk claro",
    "boa tarde, sim quero",
    "sim, e onde fica?",
    "sim pode ser terça às 19h",
    "Ok, mas quanto custa?",
    "Oi 👍",
    "👍 e onde fica?",
    "sim 👎",
    # Answers to "posso enviar?", and the yes after a change at the read-back.
    "pode mandar",
    "Pode enviar!",
    "agora sim",
]
NO = [
    "não",
    "Não!",
    "nao",
    "naum",
    "n",
    "N",
    "nn",
    "nãão",
    "NÃO",
    "agora não",
    "agora nao",
    "hoje não",
    "ainda não",
    "deixa pra lá",
    "deixa pra la",
    "não quero",
    "não, obrigado",
    "Não, prefiro quarta",
    "nao posso",
    "não tenho interesse",
    "nem",
    "nem pensar",
    "claro que não",
    "acho que não",
    "melhor não",
    "negativo",
    "esquece",
    "cancela",
    "👎",
    "❌",
    "rsrs não",
    "quero não",
]
NEITHER = [
    "",
    "   ",
    "oi",
    "bom dia",
    "talvez",
    "não sei",
    "não sei onde fica",
    "nao sei",
    "n sei",
    "não entendi",
    "nao lembro",
    "não tenho certeza",
    "nem sei",
    "quero saber o preço",
    "quero marcar uma aula",
    "isso é caro?",
    "pode me mandar o endereço?",
    "tá caro",
    "cancela minha aula de amanhã",
    "eu queria saber se sim",
    "onde fica a CT?",
    "19:00",
    "terça",
    "🎾",
    "👍👎",
    "kkkk",
    "pode mandar o endereço?",
]


@pytest.mark.parametrize("text", YES)
def test_yes(text: str) -> None:
    assert yes_no(text) is True


@pytest.mark.parametrize("text", NO)
def test_no(text: str) -> None:
    assert yes_no(text) is False


@pytest.mark.parametrize("text", NEITHER)
def test_neither(text: str) -> None:
    assert yes_no(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sim, e onde fica?", (True, "e onde fica")),
        ("Não, prefiro quarta", (False, "prefiro quarta")),
        ("oi! claro, obrigado", (True, "")),
        ("onde fica?", (None, "onde fica")),
        ("", (None, "")),
        ("👍", (True, "")),
    ],
)
def test_split_yes_no_keeps_the_rest(text: str, expected: tuple[bool | None, str]) -> None:
    assert split_yes_no(text) == expected


# Confirmations as people type them: each case exercises one part of the mechanism (spelling
# to the lexicon, intensifiers, chained agreement), not one phrase of a dialog.
@pytest.mark.parametrize(
    "text",
    [
        # Dropped double letters and folded repeats.
        "iso",
        "iso ai",
        "certoo",
        # Superlatives and diminutives of a lexicon word.
        "combinadissimo",
        "certinho!",
        "certissima",
        # One typo in a longer word.
        "confrimo",
        "conbinado",
        "perfeiyo",
        # Intensifiers, politeness and slang after a weak answer.
        "quero demais",
        "pode pls",
        "isso mano",
        "quero muito muito",
        # Agreement chained with agreement in one clause.
        "pode manda bala",
        "isso perfeito",
        "pode ser sem duvida",
        "quero sim sim",
        # Formal and foreign agreement.
        "estou de acordo",
        "Sí",
        "yeah sure",
        # The shaka is a yes in Brazilian chats.
        "🤙",
    ],
)
def test_confirmation_spellings_are_heard(text: str) -> None:
    assert yes_no(text) is True


@pytest.mark.parametrize(
    "text", ["nada disso!", "ta errada", "errado, era outro dia", "nem a pau", "naaao naao"]
)
def test_denials_are_heard(text: str) -> None:
    assert yes_no(text) is False


@pytest.mark.parametrize(
    "text",
    [
        # A typo is corrected only when one lexicon word is that close, and only in long words:
        # short ordinary words near an answer word stay themselves.
        "perto da praia?",
        "esqueci de falar, tem estacionamento?",
        "certa vez fui la",
        # Agreement must fill the weak answer's clause: a request after it is not agreement.
        "pode mandar a localizacao",
        "quero muito saber o preco",
        "isso custa quanto?",
    ],
)
def test_near_misses_are_not_answers(text: str) -> None:
    assert yes_no(text) is None
