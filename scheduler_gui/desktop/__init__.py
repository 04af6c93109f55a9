"""The window on the desktop: the applications-menu entry and the session's autostart
(install), drawing the icon's PNGs from its SVG with Qt. The files and their text
are core/desktop/'s.

May import the window's other parts, the shared modules at scheduler_gui's root (not the
application: app, main_window, status_bar, screenshot) and any core package but core/cli/.
"""
