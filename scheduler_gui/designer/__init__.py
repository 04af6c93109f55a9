"""The designer: the forms that edit a schedule document, each showing what its choices do.

May import the window's other parts, the shared modules at scheduler_gui's root (not the
application: app, main_window, status_bar, screenshot) and any core package but core/cli/.
"""
