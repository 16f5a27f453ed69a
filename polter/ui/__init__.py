"""The Textual app: screens, widgets, command-palette providers and modals."""
