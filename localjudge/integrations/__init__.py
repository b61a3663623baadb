"""Adapters to other libraries, imported only when the user hands us their objects."""
