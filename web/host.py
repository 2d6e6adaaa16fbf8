"""The host page (tablet 1280x800 or phone, touch first): set up a battle, then run it.

The page shows what the session derives from the engine: every command button is enabled only when the
engine would accept that command now (``view.allowed``), and a refused command comes back worded with its
rule, Russian then English. Host connections need the box's PIN, proved once per device (``web/auth.py``: the
page's form posts it to ``/login/host``, and the socket, the packages and the page after a reload need it no
more); wrong PINs are limited for the whole box (``web/guard.py``), and a host already in reconnects with the
pass of his ``hello``, whatever the limit says.
"""

from __future__ import annotations

from flask import Blueprint, current_app, render_template

from appliance.service.session import CommandRejected
from web import auth as login
from web import events, payloads
from web.guard import Passes, PinGuard
from web.sync import SyncNamespace, refuse

__all__ = ["PinGuard", "HostNamespace", "blueprint", "register"]  # PinGuard: the director's login shares it

blueprint = Blueprint("host", __name__)

STRINGS = {
    "host.title": ("Ведущий", "Host"),
    "host.pin": ("PIN ведущего", "Host PIN"),
    "host.pin_hint": ("Забыли PIN? Удерживайте кнопку ведущего на боксе {hold} {hold:секунду|секунды|секунд}: "
                      "PIN появится на табло бокса на {shown} {shown:секунду|секунды|секунд}. Или наберите "
                      "svoyak pin в консоли бокса",
                      "Lost the PIN? Hold the host button on the box for {hold} {hold:second|seconds}: the box's "
                      "scoreboard shows it for {shown} {shown:second|seconds}. Or type svoyak pin at the box's console"),
    "host.enter": ("Войти", "Enter"),
    "host.logout": ("Выйти", "Log out"),
    "setup.title": ("Новый бой", "New battle"),
    "setup.players": ("Игроки", "Players"),
    "setup.player_n": ("Игрок", "Player"),
    "setup.profile": ("Регламент", "Regulation"),
    "setup.themes": ("Темы", "Themes"),
    "setup.theme_n": ("Тема", "Theme"),
    "setup.red": ("красная", "red"),
    "setup.add_theme": ("+ тема", "+ theme"),
    "setup.remove_theme": ("− тема", "− theme"),
    "setup.start": ("Начать бой", "Start the battle"),
    "setup.new": ("Новый бой", "New battle"),
    "cmd.next": ("Следующий вопрос", "Next question"),
    "cmd.next_theme": ("Следующая тема", "Next theme"),
    "setup.theme_counts": ("По регламенту тем:", "Themes by the regulation:"),
    "setup.theme_count": ("Тем в бою", "Themes in the battle"),
    "host.withdrawn": ("снят", "withdrawn"),
    "host.nobody_answered": ("На этот вопрос никто не отвечал — исправлять нечего",
                             "Nobody answered this question: nothing to correct"),
    "cmd.reading_done": ("Вопрос прочитан", "Reading done"),
    "cmd.right": ("Верно", "Right"),
    "cmd.wrong": ("Минус", "Wrong"),
    "cmd.clarify": ("Уточните", "Clarify"),
    "cmd.point": ("Отвечает…", "Answers…"),
    "cmd.point_name": ("Отвечает: {name}", "Answering: {name}"),
    "cmd.short_form": ("Краткая форма", "Short form"),
    "cmd.extend": ("Ещё время", "Extend time"),
    "cmd.resume_reading": ("Читать дальше", "Resume reading"),
    "cmd.announce": ("Ответ объявлен", "Answer announced"),
    "cmd.appeal": ("Апелляция", "Appeal"),
    "cmd.time": ("Время", "Time"),
    "cmd.withdraw": ("Снять вопрос", "Withdraw"),
    "cmd.undo": ("Отменить", "Undo"),
    "cmd.claps": ("Режим «на хлопки»", "\"On claps\" mode"),
    "cmd.pick": ("Отвечает", "Answers"),
    "host.switched": ("На боксе теперь другой бой: {battle}. Страница показывает его", "This box now plays another "
                      "battle: {battle}. The page shows it"),
    "host.claps_hint": ("На хлопках: коснитесь карточки того, кто хлопнул первым (клавиши 1–4). Табло говорит залу, "
                        "что вопрос на хлопках. Вернуть кнопки — та же кнопка в «Инструментах»",
                        "On claps: tap the card of whoever clapped first (keys 1-4). The board tells the hall. Back to "
                        "the buttons: the same button in the Tools"),
    "cmd.correct": ("Исправить решение", "Correct the ruling"),
    "cmd.appeal_accept": ("Зачесть", "Accept"),
    "cmd.appeal_reject": ("Отклонить", "Reject"),
    "host.question_n": ("Вопрос", "Question"),
    "cmd.button_test": ("Проверка кнопок", "Button test"),
    "cmd.button_test_off": ("Закончить проверку кнопок", "End the button test"),
    "cmd.phones_on": ("Включить телефоны-кнопки", "Enable phone buzzers"),
    "cmd.phones_off": ("Выключить телефоны-кнопки", "Disable phone buzzers"),
    "host.seat_codes": ("Коды мест для телефонов (скажите каждому игроку его код)",
                        "Seat codes for the phones (tell each player theirs)"),
    "host.presses": ("Порядок нажатий", "Press order"),
    "host.window": ("Окно нажатий", "Press window"),
    "host.answer": ("Ответ", "Answer"),
    "host.answering": ("Отвечает", "Answering"),
    "host.shortcuts": ("Клавиши: N следующий, R прочитан, Пробел отвечает, + верно, − минус, T время, F форма, "
                       "C уточните, E ещё время, W снять, Z отменить; 1–4 выбрать отвечающего «на хлопках»",
                       "Keys: N next, R read, Space point, + right, − wrong, T time, F short form, C clarify, "
                       "E extend, W withdraw, Z undo; 1-4 pick the answerer \"on claps\""),
    "host.rejected": ("Команда отклонена", "Command refused"),
    "host.delta": ("очки", "points"),
    "host.reason": ("причина", "reason"),
    "host.apply": ("Применить", "Apply"),
    "host.finished": ("Бой окончен", "Battle over"),
    "action.ThemeStarted": ("начало темы", "the theme's start"),
    "action.PriceAnnounced": ("объявление цены {price}", "announcing the {price}"),
    "action.ReadingStarted": ("начало чтения за {price}", "starting to read the {price}"),
    "action.ReadingFinished": ("«Вопрос прочитан»", "«Reading done»"),
    "action.ReadingResumed": ("«Читать дальше»", "«Resume reading»"),
    "action.AnswererPointed": ("«Отвечает: {name}»", "«Answering: {name}»"),
    "action.AnswerJudged.right": ("«Верно» — {name}, {price}", "«Right»: {name}, {price}"),
    "action.AnswerJudged.wrong": ("«Минус» — {name}, {price}", "«Wrong»: {name}, {price}"),
    "action.TimeCalled": ("«Время» — {name}", "«Time»: {name}"),
    "action.ShortFormGiven": ("«Краткая форма»", "«Short form»"),
    "action.ClarificationRequested": ("«Уточните»", "«Clarify»"),
    "action.AnswerTimeExtended": ("«Ещё время»", "«Extend time»"),
    "action.QuestionWithdrawn": ("снятие вопроса за {price}", "withdrawing the {price}"),
    "action.AnswerAnnounced": ("«Ответ объявлен»", "«Answer announced»"),
    "action.RulingCorrected": ("исправление решения — {name}", "the correction: {name}"),
    "action.AppealLodged": ("апелляция — {name}", "the appeal: {name}"),
    "action.AppealDecided": ("решение по апелляции", "the appeal's decision"),
    "action.ModeChanged": ("смена режима", "the mode change"),
    "action.other": ("последнее действие", "the last action"),
    "undo.will": ("Отменить: {action}", "Undo: {action}"),
    "undo.done": ("Отменено: {action}", "Undone: {action}"),
    "undo.redo": ("Вернуть", "Redo"),
    "undo.withdrawn": ("Вопрос за {price} снят", "The {price} is withdrawn"),
    "withdraw.ask": ("Снять вопрос за {price}? Он будет не в счёт: очки за него отменятся, табло объявит это залу.",
                     "Withdraw the {price}? It will not count: its points are taken back and the board tells the hall."),
    "withdraw.yes": ("Да, снять", "Yes, withdraw"),
    "withdraw.no": ("Не снимать", "Keep it"),
    "host.room_battles": ("Бои этой комнаты", "This room's battles"),
    "tools.title": ("Инструменты", "Tools"),
    "tools.summary": ("исправления, апелляции, хлопки, проверка кнопок, телефоны, протокол, новый бой",
                      "corrections, appeals, claps, button test, phones, protocol, new battle"),
    "tools.question": ("Вопрос", "Question"),
    "tools.player": ("Ответ", "Answer"),
    "tools.verdict": ("Решение", "Ruling"),
    "policy.any_time": ("Исправить решение можно в любой момент боя", "A ruling may be corrected at any time"),
    "policy.current_question": ("Исправить решение можно только до следующего вопроса",
                                "A ruling may be corrected only before the next question"),
    "policy.appeal_window": ("Исправить решение можно сразу или после конца темы, до начала следующей",
                             "A ruling may be corrected at once, or after its theme ends before the next starts"),
    "policy.never": ("Решения ведущего окончательны", "The host's rulings are final"),
    "appeals.before_next_question": ("апелляция — до следующего вопроса, решить её можно и после боя",
                                     "an appeal is lodged before the next question and may be decided after the battle"),
    "appeals.after_theme": ("апелляция — сразу после конца темы, до начала следующей",
                            "an appeal is lodged right after its theme, before the next starts"),
    "battles.open_title": ("Неоконченные бои этого бокса", "This box's battles not over"),
    "battles.done_title": ("Оконченные бои этого бокса", "This box's battles over"),
    "battles.unfinished": ("не окончен", "not over"),
    "battles.finished": ("окончен", "over"),
    "battles.current": ("идёт сейчас", "live now"),
    "battles.resume": ("Продолжить", "Go on"),
    "battles.open": ("Открыть", "Open"),
    "battles.progress": ("тема {started} из {themes}", "theme {started} of {themes}"),
    "battles.not_started": ("вопросов ещё не было", "no questions yet"),
    "unfinished.title": ("Этот бой не окончен", "This battle is not over"),
    "unfinished.go_on": ("Продолжить этот бой", "Go on with this battle"),
    "unfinished.set_aside": ("Отложить и начать новый", "Set it aside, start a new one"),
    "unfinished.note": ("Отложенный бой останется в списке неоконченных: его можно продолжить в любой момент",
                        "A battle set aside stays on the list of battles not over: go on with it at any time"),
    "setup.set_aside_note": ("Текущий бой будет отложен:", "The live battle will be set aside:"),
    "setup.back": ("Назад к бою", "Back to the battle"),
    "pending.title": ("Нажато, пока не было связи с боксом: применить?",
                      "Tapped while the box could not be reached: apply it?"),
    "pending.waiting": ("Ждём связи. Когда она появится, решите, применять ли команду.",
                        "Waiting for the link. Once it is back, decide whether to apply the command."),
    "pending.hint": ("Связь есть. Бой мог уйти вперёд: примените команду, только если она ещё нужна.",
                     "The link is back. The battle may have moved on: apply the command only if it is still wanted."),
    "pending.command": ("Команда ведущего", "A host command"),
    "pending.apply": ("Применить", "Apply"),
    "pending.drop": ("Не применять", "Drop"),
    "pending.already": ("Эта команда уже была применена раньше", "That command had already been applied"),
}


class HostNamespace(SyncNamespace):
    """``/host``: the host's commands. Connect with ``auth={"pin": "1234"}``."""

    role = events.ROLE_HOST
    audience = None      # the host's whole view, behind the PIN
    hello_record = None

    def __init__(self, namespace: str) -> None:
        super().__init__(namespace)
        self.passes = Passes()

    @property
    def guard(self) -> PinGuard:
        """The box's one guard of the host PIN, a box-wide budget (``Services.pin_guard``, the composition root)."""
        return self.hub.services.pin_guard

    def admit(self, auth: dict) -> dict:
        token = self.connection_pass()
        # the PIN proved on this device before (web/auth.py: the host page's form, the packages' login) opens
        # the socket too; else this connection's pass, else the PIN it sends
        if not self.passes.has(token, "host") and login.logged_in(*login.opens("host")):
            self.passes.prove(token, "host")
        if not self.passes.has(token, "host"):
            refusal = self.guard.check("", auth.get("pin", ""), self.hub.services.identity.host_pin)
            if refusal:
                raise refuse(refusal, self.hub.catalogue)
            self.passes.prove(token, "host")
        return {"profiles": self.hub.session.adapter.profiles()}

    def on_packages(self, data=None):
        """The box's question packages for the setup form: titles and theme names with what was played (no
        question texts: the reading view gives those one at a time). The message is ``{}`` (an object)."""
        try:
            payloads.fields({} if data is None else data)
        except payloads.BadMessage as error:
            return self.hub.word(error)
        packages = self.hub.services.packages
        if packages is None:
            return self.hub.word(CommandRejected("error.no_packages", command="setup"))
        return self.call(lambda: {"packages": packages.choices()})

    def on_command(self, data=None):
        try:
            message = payloads.fields(data, id=payloads.ID, name=payloads.NAME, args=payloads.optional(payloads.PLAIN, {}))
        except payloads.BadMessage as error:
            if error.params.get("argument") in ("id", "name"):
                error.params = {}  # ``argument`` names a command's argument (docs/socketio-events.md), not these
            return self.hub.word(error)
        return self.call(self.hub.session.command, message["name"], message["args"], message["id"])


@blueprint.route("/host")
def page():
    settings = current_app.config["SVOYAK_SETTINGS"]
    rooms = current_app.extensions.get("svoyak.rooms")
    return render_template("host.html", hold_s=round(settings.reset_hold_ms / 1000),
                           shown_s=round(settings.pin_shown_ms / 1000),
                           known=login.logged_in(*login.opens("host")),
                           # a room's box: the battle's end leads back to the battles the desk gave the room
                           station=getattr(rooms, "role", "") == "station")


def register(socketio, hub) -> None:
    hub.add_namespace(HostNamespace("/host"))
