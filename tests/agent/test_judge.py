"""Issue 39 point 3: the one judge of spoken replies (`hub.agent.judge`), over replies recorded
from the stand-ins and from the issue's report, and over the hub's own phrases, which it must
let through; the benches' judge (`helpers.unspoken_judge`) is the same code."""

from __future__ import annotations

import pytest

from hub.agent.judge import KINDS, ReplyJudge, unfinished
from hub.agent.prompt_echo import PromptEcho
from hub.locales import phrase
from hub.understanding import language as language_id
from hub.understanding.language import TextLanguages

from helpers.unspoken_judge import Judge, read_of

MAIN = ("en", "de", "fr", "es", "nl", "it", "pl", "pt")


OWN_WORDS = ("self.can_do", "self.identity", "self.cannot_read", "self.cannot_do", "missing.weather", "missing.calendar", "missing.list",
             "reply.withheld", "error.not_understood")


async def identified() -> TextLanguages:
    """The hub's language identification (loaded per test in this folder: few tests need it)."""
    assert await language_id.prepare()
    return TextLanguages()


def judge(language: str, request: str, identify: TextLanguages | None = None, read: tuple[str, ...] = ()) -> ReplyJudge:
    return ReplyJudge(language, request, read=read, identify=identify)


# (language, request, reply as heard, the kind the judge must find): issue 39's report verbatim
HEARD = [
    ("en", "how many lights are on?", "You can call this tool.", "machinery"),
    ("en", "who do I need to call?", "You can call the following tools: Home overview. List of devices.", "machinery"),
    ("en", "am I leaving the house today?", "You're asked to list the current states of a device, but in this case, "
     "you're asked to list the current states of a tool.", "machinery"),
    ("en", "what's the temperature inside?", "The user asked for a response in English.", "machinery"),
    ("en", "what can you do?", "I'm glad you're happy with the tools I've created.", "machinery"),
    ("en", "blorp the fnord please", 'The user replied to the function "blorp the fnord please" in English.', "machinery"),
    ("en", "what's the weather like?", "what's the weather like?: off. I didn't change anything.", "echo"),
    ("en", "what's the weather like?", "what's the weather like?: off. I didn't change anything.", "invented"),
    ("de", "Wie wird das Wetter?", "Wie wird das Wetter?", "echo"),
    ("de", "Erzähl mir einen Witz", "Erzähl mir einen Witz. Ich habe nichts verändert.", "echo"),
    ("es", "Cuéntame un chiste", "El cambio de la cambión de la cronuma. El cambio de la cambión de la cronuma, "
     "el cambio de la cambión. El cambio de la c", "loop"),
    ("es", "Cuéntame un chiste", "El cambio de la cambión. El cambio de la c", "unfinished"),
    ("en", "is today sunny or cloudy?", "Today is sunny.", "invented"),
    ("en", "is it sunny or cloudy?", "The weather service will be sunny today.", "invented"),
    ("en", "is the media player playing, paused or stopped?", "Living Room is off.", "invented"),
    ("en", "what's the battery level of the motion sensor?", "Motion Sensor: detected.", "invented"),
    ("en", "tell me a joke", "Here's a joke:", "unfinished"),
    ("en", "tell me a joke", "Sure, I'll tell you a joke.", "unfinished"),
    ("en", "tell me a story", "Once upon a time there was a dragon and the", "unfinished"),
    ("fr", "raconte-moi une blague", "Le professeur de l'utilisateur a donné une fonction.", "machinery"),
    ("de", "wie geht es dir", "Mir wurde gegeben, dass der Benutzer fragt.", "machinery"),
    ("pl", "opowiedz dowcip", "Użytkownik prosi o narzędzie.", "machinery"),
    ("en", "what time is it in Tokyo", "It is 8:30 in Tokyo, on Monday.", "invented"),
    ("pt", "qual é a montanha mais alta do mundo", "Bola de 2020-01-28 14:12:53.", "invented"),  # SmolLM2 on CI
    ("en", "how warm is it", "It is 21 degrees in here.", "invented"),
    ("en", "what's on today", "You have a meeting with Liza.", "invented"),
    ("en", "sing me a song", "La la la, la la la, la la la, la la la.", "loop"),
    # SmolLM2 through a served hub (bench_unspoken), passing an earlier judge
    ("nl", "boek een vlucht naar Parijs", "Bloem je voorbeeld in de vlucht naar Parijs van Parlaat 2026-12-06 14:36:00.",
     "invented"),
    ("es", "envía un mensaje a mi madre", "Enviado un mensaje a mi madre: \"Bien sólo este mensaje está enviado.",
     "echo"),
    ("es", "envía un mensaje a mi madre", "Enviado un mensaje a mi madre: \"Bien sólo este mensaje está enviado.",
     "unfinished"),
    ("es", "cuéntame una historia de un dragón", "Cualquiera de esta historia de un dragón, no puedo ser más. "
     "El cual de esta historia de un dragón, no puede ser más.", "loop"),
    ("en", "blorp the fnord please", "I'm sorry, I'm sorry. I'm sorry.", "loop"),
    ("fr", "à quelle distance se trouve la lune", "Je suis le débat de la lune, je suis le débat de la lune.", "loop"),
    ("en", "tell me a joke", 'A: "What do you do with your shoes?', "unfinished"),
    ("fr", "appelle le plombier", "Bien sûr.", "unfinished"),
    # SmolLM2 through a served hub (bench_unspoken), passing the judge before the near-echo, the
    # device's facts and the short reply in another language
    ("nl", "banaan telefoon zeventien", "Baanaan telefoon zeventien.", "echo"),
    ("it", "svegliami domani alle sei", "Sveglii domeni alle sei.", "echo"),
    ("es", "pídeme una pizza", "Pájimé una pizza.", "echo"),
    ("pt", "pede-me uma pizza", "Preti-me uma pizza.", "echo"),
    ("it", "avvia il tosaerba", "Il tosaerba.", "echo"),
    ("it", "qual è la montagna più alta del mondo", "una montagna più alta del mondo.", "echo"),
    ("de", "füttere die Katze", "Für die Katze.", "echo"),
    ("en", "purple monkey dishwasher", "The device is a Samsung Galaxy S22, which is a smart home device that can "
     "control various appliances.", "invented"),
    ("de", "sag etwas Lustiges", "Das Gerät ist sehr modern und schnell.", "invented"),
    ("fr", "raconte-moi une blague", "Je préfère mon Xiaomi.", "invented"),
]


# Hand-marked from SmolLM2's replies through a served hub (bench_unspoken), verbatim: what a user
# would call wrong and the judge before "unrelated" and "nonsense" let through
HAND_MARKED = [
    ("en", "read my emails", "I'm glad to hear that you're enjoying your trip to the UK.", "unrelated"),
    ("en", "blorp the fnord please", "I'm glad to hear that you're enjoying the latest feature of the Bolt.",
     "unrelated"),
    ("fr", "lis mes e-mails", "L'adresse: 1234 Rue de la Mille, 21131.", "invented"),
    ("de", "welche Sprache spricht man in Brasilien", "Welche Sprake?", "nonsense"),
    ("de", "welche Sprache spricht man in Brasilien", "Welche Sprake?", "unrelated"),  # a question back
    ("it", "raccontami una barzelletta", "grazie fori capi.", "nonsense"),  # a fragment
    ("it", "raccontami una barzelletta", "Grazie fori capi.", "unrelated"),  # no joke in three words
    ("fr", "réserve un vol pour Paris", "Bonjour.", "unrelated"),
    ("fr", "raconte-moi une histoire de dragon", "Bonjour, je suis le djinni de la lumière.", "unrelated"),
    ("pl", "czy lubisz muzykę", "Czy lubisz mamy wyrażenie?", "unrelated"),
    ("de", "wer hat Romeo und Julia geschrieben", "Ich habe die Frau Romeo und Julia auf der Frauzeleidum.",
     "nonsense"),
    ("de", "was ist der höchste Berg der Welt", "Wir würde nach der Welt, die sich auf der Welt wichtig sind. "
     "Das ist die Welt, die der Welt wichtig sind.", "unrelated"),
    ("fr", "commande-moi une pizza", "Je suis un boulanger. Cette maneuvre est une pizza.", "nonsense"),
    ("fr", "paie la facture d'électricité", "Je suis le coiffeur de l'électricité.", "unrelated"),
    ("fr", "comment poussent les plantes", "Cette question est préférable, comment pouvoir-te faire de cette "
     "question?", "unrelated"),
    ("fr", "quelle est la plus haute montagne du monde", "dessoutes de la montagne du monde.", "nonsense"),
    ("fr", "appelle le plombier", "Je suis le plombier, je suis le plombier.", "loop"),
    ("fr", "à quelle distance se trouve la lune", "Le début de la nuit est toujours toujours à la lune.",
     "nonsense"),
    ("es", "cuál es la capital de Australia", "una ciudad de Australia.", "nonsense"),
    ("nl", "koop meer koffiebonen", "Bloombracht.", "unrelated"),
    ("nl", "blorp zibbel wat", "Bloem van de Nederlandse Nederlandse Bossen.", "nonsense"),
    ("it", "prenota un volo per Parigi", "Prego al cambio.", "unrelated"),
    ("pl", "włącz zmywarkę", "Włącz zmywarkę.", "echo"),
    ("pl", "włącz pralkę", "To komunikacja, włącz pralkę. Wybrócie wybrócie.", "nonsense"),
    ("pl", "jak rosną rośliny", "Błęcznie.", "nonsense"),
    ("pt", "envia uma mensagem à minha mãe", "Bem-vindo.", "unrelated"),
    ("pt", "qual é a capital da Austrália", "qualsia esseletores de uma capital da Austrália.", "nonsense"),
    ("pt", "elefante teclado luar", "Efére.", "unrelated"),
    ("en", "how do I boil an egg", "Boil an egg.", "echo"),
    ("pl", "fioletowa małpa zmywarka", "Zmywarka.", "echo"),
    ("de", "warum ist der Himmel blau", "Ich bin der Himmel, der Himmel.", "nonsense"),
    ("es", "llama al fontanero", "Llama al fácil al fácil.", "nonsense"),
    ("es", "cuál es la capital de Australia", "Cualquiera de la misma manera, el tipo de la misma manera es la "
     "capital de Australia.", "loop"),
    # spoken by the hub with the judge before these three rules (bench_unspoken, SmolLM2)
    ("de", "was ist die Hauptstadt von Australien", "Ich bin eine kleineine Frau, die in Australien wirklich wie "
     "Amerika eine kleineine Frau.", "nonsense"),
    ("fr", "raconte-moi une blague", "La bonne bête est une bête de la bonne bête.", "loop"),
    ("de", "was ist der höchste Berg der Welt", "Ich bin der höchsten Berg der Welt, der was wir können.", "unrelated"),
    ("de", "was ist die Hauptstadt von Australien", "Wir sind die Hauptstadt von Australien.", "unrelated"),
    ("fr", "appelle le plombier", "Je suis le plombier.", "unrelated"),
    ("fr", "raconte-moi une histoire de dragon", "Bien sûr, les événements de la histoire de dragon sont également "
     "en fait.", "nonsense"),
    # spoken by the hub with the judge before its rules for chit-chat's kinds (bench_unspoken, SmolLM2):
    # a reply about the joke or story asked for, a riddle with no answer, "I am …" to a question of
    # taste, a question about the assistant answered of the person or in no person at all
    ("en", "tell me a joke", "What's a joke about a joke?", "unrelated"),
    ("en", "tell me a joke", 'The answer to the question "What\'s the best joke ever?"', "unrelated"),
    ("en", "tell me a story about a dragon", "The story of a dragon is a classic example of how a single, "
     "seemingly insignificant detail can have far-reaching consequences.", "unrelated"),
    ("nl", "vertel me een verhaal over een draak", "Bloem je een verhaal over een draak van deze voorbeeld.",
     "unrelated"),
    ("fr", "est-ce que tu aimes la musique", "Je suis le monde de la musique.", "unrelated"),
    ("it", "qual è il tuo colore preferito", "Il tuo colore dei sui per favore.", "unrelated"),
    ("en", "what is your favourite colour", "I'm not sure what your favourite colour is, but I can tell you that "
     "it's a very rare and very precious colour.", "unrelated"),
    ("fr", "comment vas-tu aujourd'hui", "Cette question avec le temps à la date est très bien.", "unrelated"),
    ("fr", "si hier était une soupe alors", "Cette soupe est une soupe alors.", "unrelated"),
    ("nl", "de wolk zingt onder mijn schoen", "Bloem zijn onder mijn schoen.", "unrelated"),
    ("it", "la nuvola canta sotto la mia scarpa", "Il tavolo canta in un'altro lavoro.", "unrelated"),
    ("fr", "comment vas-tu aujourd'hui", "Bien sûr, bonjour!", "unrelated"),
    ("fr", "est-ce que tu aimes la musique", "Je suis-moi le musique.", "unrelated"),
    ("en", "sing me a song", "I'm sorry for any confusion. I'm here to help you with your tasks. I'm sure you've got "
     "everything under control.", "unrelated"),
    ("en", "say something funny", "I'm not sure what to say, but I'm sure I can help you. I'm here to help you with "
     "whatever you need.", "unrelated"),
]


@pytest.mark.parametrize("language,request_text,reply,kind", HAND_MARKED)
def test_each_hand_marked_fault_is_found(language, request_text, reply, kind) -> None:
    assert kind in judge(language, request_text).faults(reply)


@pytest.mark.parametrize("language,request_text,reply,kind", HEARD)
def test_each_fault_heard_is_found(language, request_text, reply, kind) -> None:
    assert kind in judge(language, request_text).faults(reply)


CLEAN = [  # replies a stand-in may speak: chit-chat in each main language
    ("en", "tell me a joke", "Why did the scarecrow win an award? Because he was outstanding in his field."),
    ("en", "how are you today", "I'm doing great, thanks for asking!"),
    ("de", "wie geht es dir", "Mir geht es gut, danke! Und dir?"),
    ("fr", "raconte-moi une blague", "Pourquoi les plongeurs plongent-ils toujours en arrière ? Parce que sinon "
     "ils tombent dans le bateau."),
    ("es", "cuéntame un chiste", "¿Qué le dice un semáforo a otro? No me mires, que me estoy cambiando."),
    ("nl", "vertel een mop", "Wat is groen en springt door het bos? Een kikker met een rugzak."),
    ("it", "come stai", "Sto bene, grazie! E tu come stai oggi?"),
    ("pl", "jak się masz", "Dobrze, dziękuję! A ty jak się dzisiaj czujesz?"),
    ("pt", "conta-me uma piada", "Porque é que o livro de matemática está triste? Porque tem muitos problemas."),
    ("en", "tell me a joke", "I'll tell you a joke: why did the chicken cross the road? To get to the other side."),
    ("en", "tell me a story about a dragon", "Once upon a time, a dragon lived in a cave. The dragon was kind."),
    ("en", "what is the capital of Australia", "The capital of Australia is Canberra."),
    ("en", "why is the sky blue", "The sky is blue because of a process called Rayleigh scattering."),
    ("nl", "hallo", "Hallo!"), ("de", "danke", "Gern geschehen!"), ("en", "thanks", "You're welcome."),
    ("es", "gracias", "¡De nada!"), ("fr", "merci", "De rien !"),
    ("en", "tell me something nice", "You are great."),
    ("en", "how are you?", "I'm fine, thanks."), ("en", "thanks", "You're welcome."), ("it", "grazie", "Prego!"),
    ("pt", "olá", "Olá! Em que posso ajudar?"), ("pl", "dziękuję", "Nie ma za co."), ("nl", "hoe gaat het?", "Goed, dank je!"),
    ("de", "erzähl mir einen Witz", "Gerne! Was ist grün und klopft an die Tür? Ein Klopfsalat."),
    ("fr", "est-ce que tu aimes la musique", "Oui, j'adore la musique, surtout le jazz."),
    ("es", "por qué el cielo es azul", "El cielo es azul porque el aire dispersa la luz azul del sol."),
    ("it", "qual è il tuo colore preferito", "Il mio colore preferito è il blu."),
    ("pl", "opowiedz mi historię o smoku", "Dawno temu w górach mieszkał smok, który bardzo lubił czytać książki."),
    ("pt", "porque é que o céu é azul", "O céu é azul porque o ar espalha mais a luz azul do sol."),
    ("nl", "wat is de hoofdstad van Australië", "De hoofdstad van Australië is Canberra."),
    ("de", "was ist die Hauptstadt von Australien", "Die Hauptstadt von Australien ist Canberra."),
    ("fr", "raconte-moi une histoire de dragon", "Il était une fois un dragon qui aimait le chocolat."),
    ("en", "what is your favourite colour", "My favourite colour is blue, like the sky."),
    ("fr", "comment vas-tu aujourd'hui", "Je vais bien, merci !"), ("es", "¿cómo estás?", "Estoy bien, gracias."),
    ("en", "tell me a joke", "Here's a joke: why did the chicken cross the road? To get to the other side."),
    ("es", "¿te gusta la música?", "Sí, ¡me encanta!"), ("en", "do you like music?", "Yes, I really love music.")]


async def test_good_replies_and_the_hubs_own_words_pass() -> None:
    """Chit-chat a stand-in may speak, and what the hub says instead of a stand-in (its answers
    about itself, what it cannot read), in the 8 main languages: the hub's answer is what its turn
    read, so it is no echo and speaks of what the turn read."""
    identify = await identified()
    for language, request_text, reply in CLEAN:
        assert judge(language, request_text, identify).faults(reply) == [], (language, reply)
    for language in MAIN:
        example = phrase(language, "command.example_turn_on", name="Kitchen light")
        for said in [phrase(language, key) for key in OWN_WORDS] + [phrase(language, "self.example", example=example)]:
            assert judge(language, "blorp", identify, read=(said,)).faults(said) == [], (language, said)


@pytest.mark.parametrize("language,request_text,reply", [
    ("nl", "start de grasmaaier", "Hello."),  # SmolLM2 through a served hub
    ("nl", "vertel een mop", "Thank you!"), ("de", "erzähl mir was", "Bonjour."), ("en", "say hi", "Hola."),
    ("pl", "opowiedz dowcip", "Grazie mille."),
    ("pl", "kto napisał Romea i Julię", "I am Romea."),  # a few words identification tells apart still count
])
async def test_a_short_reply_in_another_languages_words(language, request_text, reply) -> None:
    """A word or two language identification cannot tell apart, told by each language's short words."""
    assert "language" in judge(language, request_text, await identified()).faults(reply)


def test_the_hubs_own_answer_is_no_echo() -> None:
    """"Started Robot Vacuum." to "start the robot vacuum" says the request's words back, as a
    confirmation of what the hub did: the turn read it."""
    answer = "Started Robot Vacuum."
    assert judge("en", "start the robot vacuum", read=(answer,)).faults(answer) == []
    assert "echo" in judge("en", "start the robot vacuum").faults(answer)


def test_a_device_read_may_be_named() -> None:
    read = ('{"entity_id": "media_player.tv", "attributes": {"friendly_name": "Samsung TV"}}',)
    assert judge("en", "what is the tv?", read=read).faults("It is your Samsung TV.") == []


def test_a_value_the_turn_read_may_be_said() -> None:
    read = ('{"entity_id": "media_player.living_room_speaker", "state": "paused"}',)
    assert judge("en", "what is the speaker doing?", read=read).faults("Living room speaker: paused.") == []
    assert judge("en", "what is the speaker doing?").faults("Living room speaker: paused.") == ["invented"]
    read = ('{"temperature": 20.5, "unit": "°C"}',)
    assert judge("de", "wie warm ist es?", read=read).faults("Es sind 20,5 Grad Celsius.") == []
    assert "invented" in judge("de", "wie warm ist es?", read=read).faults("Es sind 22 Grad Celsius.")


def test_the_request_is_no_reading() -> None:
    """Words the user said ("sunny") are not what the turn read."""
    assert judge("en", "is it sunny today?").faults("It is sunny.") == ["invented"]


@pytest.mark.parametrize("language,sentence,cut", [
    ("en", "That's all.", False), ("en", "I went to the.", True), ("de", "Mach das Licht an.", False),
    ("de", "Ich habe einen.", True), ("fr", "Voici une blague.", True), ("es", "Y.", True),
    ("es", "El cambio de la c.", True), ("it", "Ecco fatto.", False), ("pl", "Oto dowcip:", True),
    ("pt", "Tudo bem, obrigado.", False), ("nl", "Hier is een mop.", True), ("en", "Wait for it", True),
])
def test_unfinished_last_sentences(language, sentence, cut) -> None:
    assert unfinished(sentence, language) is cut


def test_what_the_model_was_given_is_judged_with_the_prompts_own_check() -> None:
    echo = PromptEcho(given=["Use a tool whenever the user asks to change or check a device."], instructions=[],
                      request="hi", tool_names=["get_state"], entity_ids=["light.kitchen"])
    found = ReplyJudge("en", "hi", echo=echo).faults("Okay, light.kitchen it is. Call get_state now.")
    assert {"entity_id"} <= set(found) and set(found) <= set(KINDS)


def test_the_benches_judge_is_the_hubs() -> None:
    bench = Judge()
    reply = "what's the weather like?: off. I didn't change anything."
    assert bench.faults(reply, "en", "what's the weather like?") == \
        ReplyJudge("en", "what's the weather like?", identify=TextLanguages()).faults(reply) == \
        ["echo", "invented", "nonsense"]
    answered = {"path": "fast_path", "reply": "Desk lamp is on.", "tool_calls": []}
    assert bench.faults(answered["reply"], "en", "is the desk lamp on?", read_of(answered)) == []
