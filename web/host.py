"""The host page (tablet 1280x800 or phone, touch first): set up a battle, then run it.

The page shows what the session derives from the engine: every command button is enabled only when the
engine would accept that command now (``view.allowed``), and a refused command comes back worded with its
rule, Russian then English. Host connections need the box's PIN; wrong PINs are limited for the whole box
(``web/guard.py``), and a host already in reconnects with the pass of his ``hello``, whatever the limit says.
"""

from __future__ import annotations

from flask import Blueprint, render_template

from web import events, payloads
from web.guard import Passes, PinGuard, pin_space
from web.sync import SyncNamespace, refuse

__all__ = ["PinGuard", "HostNamespace", "blueprint", "register"]  # PinGuard: the director's login shares it

blueprint = Blueprint("host", __name__)

STRINGS = {
    "host.title": ("Ведущий", "Host"),
    "host.pin": ("PIN ведущего", "Host PIN"),
    "host.pin_hint": ("PIN показан на табло при запуске и в консоли бокса",
                      "The PIN is shown on the scoreboard at start and in the box's console"),
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
    "host.corrections": ("Апелляции и исправления (в конце темы)", "Appeals and corrections (end of a theme)"),
    "host.delta": ("очки", "points"),
    "host.reason": ("причина", "reason"),
    "host.apply": ("Применить", "Apply"),
    "host.finished": ("Бой окончен", "Battle over"),
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
    host_keys = True

    def __init__(self, namespace: str, guard: PinGuard) -> None:
        super().__init__(namespace)
        self.guard = guard
        self.passes = Passes()

    def admit(self, auth: dict) -> dict:
        token = self.connection_pass()
        if not self.passes.has(token, "host"):
            refusal = self.guard.check("", auth.get("pin", ""), self.hub.services.identity.host_pin)
            if refusal:
                raise refuse(refusal, self.hub.catalogue)
            self.passes.prove(token, "host")
        if not self.hub.host_logged_in:
            # The PIN has done its job: scoreboards stop showing it (a later board's hello leaves it out too).
            self.hub.host_logged_in = True
            self.hub.socketio.emit(events.HOST_PRESENT, {}, namespace="/board")
        return {"profiles": self.hub.session.adapter.profiles()}

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
    return render_template("host.html")


def register(socketio, hub) -> None:
    hub.add_namespace(HostNamespace("/host", PinGuard(space=pin_space(hub.services.identity.host_pin))))
