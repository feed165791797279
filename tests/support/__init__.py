"""Test helpers, one module per kind; test files import helpers from here only, never from one another.

http        the HTTP helper (`Api`, `expect=` statuses) and the error-envelope assertions
personas    registered accounts and the halls tests start from
factories   rows written or read directly in the database
guilds, messages, accounts, files   calls of each domain over HTTP (and the images files need)
gateway     the WebSocket test client; delivery: who received which dispatch
shapes      the fields of each answered or dispatched object
stores      one store per kind for the limiter tests
isolation, processes   fresh databases, clean environments, real `meadhall serve` processes
"""
