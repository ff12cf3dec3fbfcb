"""A stand-in desktop notification server (org.freedesktop.Notifications, the
Desktop Notifications Specification) on the session bus named by
DBUS_SESSION_BUS_ADDRESS, for the window tests: each notification is printed as a
JSON line on stdout ({"id", "summary", "body", "actions"}); a line "click ID" on
stdin clicks notification ID (the signal ActionInvoked with the action "default",
as a server reports a click on the notification itself). Runs on Debian's python3
(python3-dbus, python3-gi), not the tests' virtual environment."""

import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

INTERFACE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


class Server(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, PATH)
        self.last_id = 0

    @dbus.service.method(INTERFACE, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, icon, summary, body, actions, hints, timeout):
        self.last_id += 1
        line = {
            "id": self.last_id,
            "app": str(app_name),
            "summary": str(summary),
            "body": str(body),
            "actions": [str(action) for action in actions],
        }
        print(json.dumps(line), flush=True)
        return dbus.UInt32(self.last_id)

    @dbus.service.method(INTERFACE, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["actions", "body"]

    @dbus.service.method(INTERFACE, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("stand-in", "switchboard tests", "1.0", "1.2")

    @dbus.service.method(INTERFACE, in_signature="u", out_signature="")
    def CloseNotification(self, notification_id):
        self.NotificationClosed(notification_id, 3)

    @dbus.service.signal(INTERFACE, signature="us")
    def ActionInvoked(self, notification_id, action):
        pass

    @dbus.service.signal(INTERFACE, signature="uu")
    def NotificationClosed(self, notification_id, reason):
        pass


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    name = dbus.service.BusName(INTERFACE, bus)
    server = Server(bus)
    loop = GLib.MainLoop()

    def on_input(source, _condition):
        line = source.readline()
        if not line:
            loop.quit()
            return False
        command, _, argument = line.strip().partition(" ")
        if command == "click":
            server.ActionInvoked(dbus.UInt32(int(argument)), "default")
        return True

    GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_input)
    print(json.dumps({"ready": True, "name": str(name.get_name())}), flush=True)
    loop.run()


if __name__ == "__main__":
    main()
