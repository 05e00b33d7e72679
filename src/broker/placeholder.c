/* placeholder: replaced by the protocol module */
int samsa_broker_placeholder(void);
int
samsa_broker_placeholder(void)
{
    return 0;
}
