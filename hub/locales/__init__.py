"""locales"""
