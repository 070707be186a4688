"""Tables of people and the hash-chained audit trail."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON
from sqlmodel import Field, SQLModel

from storage.tables.columns import ts_column


class PersonRow(SQLModel, table=True):
    """A person who can act in the app: `local`, or a signed-in e-mail address, with roles."""

    __tablename__ = "person"

    id: str = Field(primary_key=True)
    name: str = ""
    roles: list = Field(default_factory=list, sa_type=JSON)
    created_at: datetime = ts_column()
    updated_at: datetime = ts_column()
    updated_by: str = "system"


class AuditEventRow(SQLModel, table=True):
    """One link of the hash-chained audit trail. Append-only: `storage.audit` verifies the chain."""

    __tablename__ = "audit_event"

    id: int | None = Field(default=None, primary_key=True)
    seq: int = Field(unique=True)
    created_at: datetime = ts_column(index=True)
    actor: str = Field(index=True)
    action: str = Field(index=True)
    entity_type: str
    entity_id: str
    run_id: int | None = Field(default=None, index=True)
    before_hash: str | None = None
    after_hash: str | None = None
    detail: dict = Field(default_factory=dict, sa_type=JSON)
    prev_hash: str
    hash: str


class AuditHeadRow(SQLModel, table=True):
    """The chain's newest link (one row, id 1). Locked while appending, so links never fork."""

    __tablename__ = "audit_head"

    id: int = Field(default=1, primary_key=True)
    seq: int = 0
    hash: str
