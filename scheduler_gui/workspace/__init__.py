"""The workspace in the window: the folder and its schedules (folder), its default
zone (zone), the document being edited (document) and its autosave, the recent
files, the File menu (files, import_dialog), following the document off the GUI
thread (spec_follower), schedule names and ids (schedule_names), the session
guard, the sidebar and the first-run card.

May import the window's other parts, the shared modules at scheduler_gui's root (not the
application: app, main_window, status_bar, screenshot) and any core package but core/cli/.
"""
